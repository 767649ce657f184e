package ocm

import "context"

type verifiedFetchKey struct{}

// WithVerifiedFetch marks a fetch whose content will be checked against a
// signed digest. Such a fetch must not go where only unsigned fields of a
// descriptor send it: access implementations then refuse plain HTTP,
// redirects to other hosts and certificate authorities an access names
// (the digest check comes after the connection, too late for those).
func WithVerifiedFetch(ctx context.Context) context.Context {
	return context.WithValue(ctx, verifiedFetchKey{}, true)
}

// VerifiedFetch reports whether ctx was marked by WithVerifiedFetch.
func VerifiedFetch(ctx context.Context) bool {
	v, _ := ctx.Value(verifiedFetchKey{}).(bool)
	return v
}
