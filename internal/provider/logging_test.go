package provider

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/landscaper-tf/terraform-provider-landscaper/internal/core"
	"github.com/landscaper-tf/terraform-provider-landscaper/internal/engine"
)

func TestJobLoggerMasksSensitiveExports(t *testing.T) {
	prev := engine.Status{Items: map[string]*engine.ItemStatus{
		"db":   {Export: json.RawMessage(`{"password":"hunter22","pin":12345678,"enabled":true,"id":"a"}`)},
		"gone": {Export: json.RawMessage(`{"token":"tok-9f8e"}`)},
		"open": {Export: json.RawMessage(`{"host":"db.local"}`)},
	}}
	// gone is no longer in the configuration, but was sensitive when last applied.
	saved := storedExecution{Status: prev, Sensitive: []string{"gone"}}
	l := newJobLogger(context.Background(), saved.sensitiveNames(map[string]bool{"db": true}), prev)
	got := l.masked("pw hunter22 pin 12345678 token tok-9f8e host db.local enabled true id a")
	want := "pw *** pin *** token *** host db.local enabled true id a"
	if got != want {
		t.Fatalf("masked %q\nwant   %q", got, want)
	}
	st := l.redact(engine.Status{LastError: &core.Error{Message: "stderr: hunter22"}})
	if st.LastError.Message != "stderr: ***" {
		t.Fatalf("redacted %q", st.LastError.Message)
	}
}
