package core

import (
	"errors"
	"fmt"
	"net"
	"strings"
	"syscall"
	"testing"
	"time"
)

func TestValidName(t *testing.T) {
	for _, tc := range []struct {
		name string
		ok   bool
	}{
		{"a", true},
		{"app", true},
		{"my-app_1.v2", true},
		{"A9", true},
		{strings.Repeat("a", 63), true},
		{strings.Repeat("a", 64), false},
		{"", false},
		{"-app", false},
		{"app-", false},
		{"_app", false},
		{"app.", false},
		{"a/b", false},
		{"a b", false},
		{"ä", false},
	} {
		err := ValidName(tc.name)
		if (err == nil) != tc.ok {
			t.Errorf("ValidName(%q) = %v, want ok=%v", tc.name, err, tc.ok)
		}
		if err != nil && !strings.Contains(err.Error(), NameRule) {
			t.Errorf("ValidName(%q): message %q does not state the rule", tc.name, err)
		}
	}
}

func TestRetryable(t *testing.T) {
	for _, tc := range []struct {
		name string
		err  *Error
		want bool
	}{
		{"transient without codes", Transient("R", "m"), true},
		{"transient with a recoverable code", Transient("R", "m", "ERR_WEBHOOK"), true},
		{"transient with an unrecoverable code", Transient("R", "m", CodeInternalProblem), false},
		{"transient with a timeout", Transient("R", "m", CodeTimeout), false},
		{"terminal without codes", Terminal("R", "m"), false},
		{"configuration problem", ConfigurationProblem("x"), false},
	} {
		if got := tc.err.Retryable(); got != tc.want {
			t.Errorf("%s: Retryable() = %v, want %v", tc.name, got, tc.want)
		}
	}
	for _, c := range []string{CodeConfigurationProblem, CodeInternalProblem, CodeTimeout, CodeUnauthorized, CodeCyclicDependencies} {
		if !Unrecoverable([]string{"ERR_OTHER", c}) {
			t.Errorf("%s is not unrecoverable", c)
		}
	}
	if Unrecoverable([]string{CodeInterrupted, CodeForInfoOnly}) {
		t.Error("ERR_INTERRUPTED or ERR_FOR_INFO_ONLY counted as unrecoverable")
	}
}

func TestStamp(t *testing.T) {
	t0 := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	t2 := t0.Add(2 * time.Minute)
	first := &Error{Operation: OperationReconcile, Reason: "R", Message: "m"}
	first.Stamp(nil, t0)
	for _, tc := range []struct {
		name               string
		next               Error
		transition, update time.Time
	}{
		{"same error", Error{Operation: OperationReconcile, Reason: "R", Message: "m"}, t0, t0},
		{"new message", Error{Operation: OperationReconcile, Reason: "R", Message: "other"}, t0, t2},
		{"new codes", Error{Operation: OperationReconcile, Reason: "R", Message: "m", Codes: []string{"X"}}, t0, t2},
		{"new operation", Error{Operation: OperationDelete, Reason: "R", Message: "m"}, t2, t2},
	} {
		e := tc.next
		e.Stamp(first, t2)
		if !e.LastTransitionTime.Equal(tc.transition) || !e.LastUpdateTime.Equal(tc.update) {
			t.Errorf("%s: times %v / %v, want %v / %v", tc.name, e.LastTransitionTime, e.LastUpdateTime, tc.transition, tc.update)
		}
	}
}

func TestUnreachable(t *testing.T) {
	for _, c := range []struct {
		err  error
		want bool
	}{
		{&net.DNSError{Err: "no such host", Name: "x.invalid", IsNotFound: true}, true},
		{fmt.Errorf("dial: %w", syscall.ECONNREFUSED), true},
		{errors.New("Get \"https://x\": dial tcp 127.0.0.1:1: connect: connection refused"), true}, // flattened by helm
		{&net.DNSError{Err: "i/o timeout", Name: "x", IsTimeout: true}, false},                     // a slow resolver may recover
		{errors.New("503 Service Unavailable"), false},
		{nil, false},
	} {
		if got := Unreachable(c.err); got != c.want {
			t.Errorf("Unreachable(%v) = %v", c.err, got)
		}
	}
	if e := TransientCause("R", "m", syscall.ECONNREFUSED); !e.Transient || !e.Unreachable || !e.Clone().Unreachable {
		t.Errorf("TransientCause: %+v", e)
	}
}
