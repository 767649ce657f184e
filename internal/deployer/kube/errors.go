package kube

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"syscall"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	utilnet "k8s.io/apimachinery/pkg/util/net"

	"github.com/landscaper-tf/terraform-provider-landscaper/internal/core"
)

// Reasons of the errors this package returns. They name the step that
// failed, as Landscaper's reasons do.
const (
	ReasonApply        = "ApplyManifests"
	ReasonCRD          = "WaitForCRD"
	ReasonCleanup      = "CleanupOrphaned"
	ReasonReadiness    = "ReadinessCheck"
	ReasonExport       = "ReadExportValues"
	ReasonPatch        = "PatchAfterDeployment"
	ReasonDelete       = "DeleteManifests"
	ReasonDrift        = "DriftCheck"
	ReasonTarget       = "TargetAccess"
	ReasonConfig       = "ConfigurationProblem"
	ReasonUnauthorized = "Unauthorized"
)

// Classify turns an error of a Kubernetes API call into a core error with
// the given reason, prefixing message to the error's text.
//
// Transient (retried with backoff until the item's timeout): conflicts,
// throttling, server errors and timeouts, unreachable API servers, kinds the
// API server does not serve (yet), objects not found (a namespace another
// item creates), already-existing objects (a race with another writer) and
// namespaces being terminated. Terminal: invalid or malformed objects
// (ERR_CONFIGURATION_PROBLEM) and rejected credentials or permissions
// (ERR_UNAUTHORIZED). Errors that are already core errors are returned as
// they are; anything unknown is transient, as the engine's default.
func Classify(err error, reason, message string) *core.Error {
	if err == nil {
		return nil
	}
	var ce *core.Error
	if errors.As(err, &ce) {
		return ce
	}
	msg := err.Error()
	if message != "" {
		msg = message + ": " + msg
	}
	switch {
	case meta.IsNoMatchError(err):
		return core.Transient(reason, msg+" (the kind is not served by the API server; is its CRD installed?)")
	case apierrors.IsUnauthorized(err):
		return core.Terminal(ReasonUnauthorized, msg, core.CodeUnauthorized)
	case apierrors.IsForbidden(err):
		if apierrors.HasStatusCause(err, corev1.NamespaceTerminatingCause) {
			return core.Transient(reason, msg)
		}
		return core.Terminal(ReasonUnauthorized, msg, core.CodeUnauthorized)
	case apierrors.IsInvalid(err), apierrors.IsBadRequest(err), apierrors.IsMethodNotSupported(err),
		apierrors.IsNotAcceptable(err), apierrors.IsUnsupportedMediaType(err), apierrors.IsRequestEntityTooLargeError(err):
		return core.Terminal(reason, msg, core.CodeConfigurationProblem)
	case apierrors.IsConflict(err), apierrors.IsTooManyRequests(err), apierrors.IsServerTimeout(err),
		apierrors.IsTimeout(err), apierrors.IsInternalError(err), apierrors.IsServiceUnavailable(err),
		apierrors.IsUnexpectedServerError(err), apierrors.IsNotFound(err), apierrors.IsAlreadyExists(err),
		apierrors.IsGone(err), apierrors.IsResourceExpired(err):
		return core.Transient(reason, msg)
	}
	var status apierrors.APIStatus
	if errors.As(err, &status) {
		code := status.Status().Code
		if code >= http.StatusInternalServerError || code == 0 {
			return core.Transient(reason, msg)
		}
		if code >= http.StatusBadRequest {
			return core.Terminal(reason, msg, core.CodeConfigurationProblem)
		}
	}
	if isNetworkError(err) || errors.Is(err, context.DeadlineExceeded) {
		return core.TransientCause(reason, msg, err)
	}
	return core.TransientCause(reason, msg, err)
}

// isNetworkError reports errors of reaching the API server at all.
func isNetworkError(err error) bool {
	var ne net.Error
	return utilnet.IsConnectionRefused(err) || utilnet.IsConnectionReset(err) || utilnet.IsProbableEOF(err) ||
		errors.Is(err, syscall.ECONNREFUSED) || errors.As(err, &ne)
}

// configError is a terminal configuration problem found while running.
func configError(format string, args ...any) *core.Error {
	return core.Terminal(ReasonConfig, fmt.Sprintf(format, args...), core.CodeConfigurationProblem)
}
