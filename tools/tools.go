//go:build generate

// Package tools holds the build tooling of the provider. Its dependencies are
// pinned in tools/go.mod (tool directives), separately from the provider's
// own go.mod. Run `make generate` (or `go generate ./...` in this directory).
package tools

// Generate the provider documentation (docs/) from templates/ and examples/.
// The script makes sure tfplugindocs uses the local terraform binary and never
// downloads one.
//go:generate bash ../scripts/generate-docs.sh
