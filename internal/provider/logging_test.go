package provider

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-log/tflogtest"

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

// A waiting item's periodic report is an INFO line naming what it waits
// for, so TF_LOG=INFO never goes quiet during a long wait.
func TestJobLoggerReportsWaitsAtInfo(t *testing.T) {
	var buf bytes.Buffer
	ctx := tflogtest.RootLogger(context.Background(), &buf)
	l := newJobLogger(ctx, nil, engine.Status{})
	why := "Deployment example/web: 0 of 1 replicas available"
	l.observe(engine.Event{Execution: "app", JobID: "j", Item: "web", Waiting: &why, Elapsed: 30 * time.Second})
	l.observe(engine.Event{Execution: "app", JobID: "j", Item: "web", Requeue: 5 * time.Second})
	entries, err := tflogtest.MultilineJSONDecode(&buf)
	if err != nil {
		t.Fatal(err)
	}
	var info []string
	for _, e := range entries {
		if e["@level"] == "info" {
			info = append(info, fmt.Sprint(e["@message"]))
		}
	}
	want := []string{`deploy item "web": still waiting after 30s for: ` + why}
	if !slices.Equal(info, want) {
		t.Fatalf("INFO lines %q, want %q", info, want)
	}
}

// A retried error is an INFO line that says why (the message, which
// names the URL or object, masked as every line is) and when the next
// attempt is, so a long apply is not silent about its cause.
func TestJobLoggerSaysWhyItRetries(t *testing.T) {
	var buf bytes.Buffer
	ctx := tflogtest.RootLogger(context.Background(), &buf)
	prev := engine.Status{Items: map[string]*engine.ItemStatus{"db": {Export: json.RawMessage(`{"password":"hunter22"}`)}}}
	l := newJobLogger(ctx, map[string]bool{"db": true}, prev)
	next := time.Date(2026, 11, 27, 12, 0, 31, 0, time.UTC)
	err := &core.Error{Reason: "FetchChart", Message: "unable to fetch https://user:hunter22@charts.invalid/app.tgz: lookup charts.invalid: no such host"}
	l.observe(engine.Event{Execution: "app", JobID: "j", Item: "chart", Err: err, Retry: 30 * time.Second, RetryAt: next, Attempt: 5})
	entries, derr := tflogtest.MultilineJSONDecode(&buf)
	if derr != nil {
		t.Fatal(derr)
	}
	if len(entries) != 1 {
		t.Fatalf("entries %v", entries)
	}
	e := entries[0]
	want := `deploy item "chart": attempt 5 failed, retrying at 12:00:31 (in 30s): FetchChart: unable to fetch https://user:***@charts.invalid/app.tgz: lookup charts.invalid: no such host`
	if e["@level"] != "info" || e["@message"] != want || e["retry_at"] != "2026-11-27T12:00:31Z" || e["retry_in"] != "30s" || e["deploy_item"] != "chart" {
		t.Fatalf("entry %v\nwant message %s", e, want)
	}
}
