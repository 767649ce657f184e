package mock

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/landscaper-tf/terraform-provider-landscaper/internal/core"
	"github.com/landscaper-tf/terraform-provider-landscaper/internal/deployer"
)

func req(config string) deployer.Request {
	return deployer.Request{
		Operation: core.OperationReconcile,
		Execution: "exec",
		Item:      "item",
		JobID:     "job-1",
		Config:    json.RawMessage(config),
	}
}

// expectClass asserts err is a *core.Error with the given shape.
func expectClass(t *testing.T, err error, transient bool, reason string, codes ...string) {
	t.Helper()
	_ = classified(t, err, transient, reason, codes...)
}

// classified checks an error's classification and returns it for more checks.
func classified(t *testing.T, err error, transient bool, reason string, codes ...string) *core.Error {
	t.Helper()
	var de *core.Error
	if !errors.As(err, &de) {
		t.Fatalf("error %v (%T) is not a *core.Error", err, err)
	}
	if de.Transient != transient || de.Reason != reason {
		t.Fatalf("got transient=%v reason=%q, want transient=%v reason=%q (message %q)",
			de.Transient, de.Reason, transient, reason, de.Message)
	}
	if len(codes) > 0 && !slices.Equal(de.Codes, codes) {
		t.Fatalf("codes = %v, want %v", de.Codes, codes)
	}
	return de
}

func TestValidate(t *testing.T) {
	tests := []struct {
		name   string
		config string
		// wantErr is a substring of the message; empty means valid.
		wantErr string
	}{
		{name: "nil config", config: ""},
		{name: "empty object", config: "{}"},
		{name: "whitespace object", config: " \n{ } \n"},
		{name: "full landscaper config", config: `{"apiVersion":"mock.deployer.landscaper.gardener.cloud/v1alpha1","kind":"ProviderConfiguration","phase":"Succeeded","providerStatus":{"apiVersion":"mock.deployer.landscaper.gardener.cloud/v1alpha1","kind":"ProviderStatus","key1":"val1"},"export":{"key2":"val2"}}`},
		{name: "phase failed", config: `{"phase":"Failed"}`},
		{name: "empty phase means default", config: `{"phase":""}`},
		{name: "null fields", config: `{"phase":null,"export":null,"providerStatus":null,"duration":null}`},
		{name: "extensions", config: `{"duration":"1m30s","transientErrors":3,"deletePhase":"Failed"}`},
		{name: "zero duration", config: `{"duration":"0s"}`},
		{name: "scalar export", config: `{"export":42}`},

		{name: "not an object", config: `["phase"]`, wantErr: "must be a JSON object"},
		{name: "null config", config: `null`, wantErr: "must be a JSON object"},
		{name: "invalid json", config: `{"phase":`, wantErr: "not valid JSON"},
		{name: "trailing data", config: `{} {}`, wantErr: "not valid JSON"},
		{name: "wrong apiVersion", config: `{"apiVersion":"landscaper.gardener.cloud/v1alpha1"}`, wantErr: `apiVersion must be "mock.deployer.landscaper.gardener.cloud/v1alpha1"`},
		{name: "wrong kind", config: `{"kind":"DeployItem"}`, wantErr: `kind must be "ProviderConfiguration", got "DeployItem"`},
		{name: "phase progressing", config: `{"phase":"Progressing"}`},
		{name: "phase init", config: `{"phase":"Init"}`},
		{name: "phase delete failed", config: `{"phase":"DeleteFailed"}`},
		{name: "initialPhase", config: `{"initialPhase":"Progressing"}`},
		{name: "continuousReconcile every", config: `{"continuousReconcile":{"every":"1h"}}`},
		{name: "continuousReconcile cron", config: `{"continuousReconcile":{"cron":"*/5 * * * *"}}`},
		{name: "continuousReconcile empty", config: `{"continuousReconcile":{}}`},
		{name: "phase wrong case", config: `{"phase":"failed"}`, wantErr: `phase must be a deploy item phase (Init, Progressing`},
		{name: "initialPhase unknown", config: `{"initialPhase":"Running"}`, wantErr: `initialPhase must be a deploy item phase`},
		{name: "continuousReconcile both", config: `{"continuousReconcile":{"every":"1h","cron":"* * * * *"}}`, wantErr: "exactly one of cron and every"},
		{name: "continuousReconcile bad cron", config: `{"continuousReconcile":{"cron":"every day"}}`, wantErr: `continuousReconcile.cron "every day"`},
		{name: "continuousReconcile bad every", config: `{"continuousReconcile":{"every":"-1h"}}`, wantErr: `continuousReconcile.every "-1h" must be a positive duration`},
		{name: "phase not a string", config: `{"phase":1}`, wantErr: "phase"},
		{name: "bad deletePhase", config: `{"deletePhase":"Deleting"}`, wantErr: `deletePhase must be "Succeeded" or "Failed", got "Deleting"`},
		{name: "unparsable duration", config: `{"duration":"soon"}`, wantErr: `duration "soon" is not a Go duration`},
		{name: "numeric duration", config: `{"duration":200}`, wantErr: "duration must be a Go duration string"},
		{name: "negative duration", config: `{"duration":"-1s"}`, wantErr: "duration must not be negative"},
		{name: "negative transientErrors", config: `{"transientErrors":-1}`, wantErr: "transientErrors must be 0 or more, got -1"},
		{name: "fractional transientErrors", config: `{"transientErrors":1.5}`, wantErr: "transientErrors"},
	}
	d := New()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := d.Validate(json.RawMessage(tt.config))
			if tt.wantErr == "" {
				if err != nil {
					t.Fatalf("Validate: %v", err)
				}
				return
			}
			if err == nil {
				t.Fatalf("Validate succeeded, want error containing %q", tt.wantErr)
			}
			de := classified(t, err, false, ReasonConfigurationProblem, core.CodeConfigurationProblem)
			if !strings.Contains(de.Message, tt.wantErr) {
				t.Fatalf("message %q does not contain %q", de.Message, tt.wantErr)
			}
			// Reconcile and Delete must not trust an unvalidated config.
			for name, run := range map[string]func(context.Context, deployer.Request) (deployer.Result, error){
				"Reconcile": d.Reconcile, "Delete": d.Delete,
			} {
				_, err := run(context.Background(), req(tt.config))
				if err == nil {
					t.Fatalf("%s succeeded on an invalid config", name)
				}
				expectClass(t, err, false, ReasonConfigurationProblem, core.CodeConfigurationProblem)
			}
		})
	}
}

func TestReconcileOutcome(t *testing.T) {
	tests := []struct {
		name       string
		config     string
		wantStatus string
		wantExport string
		wantReason string
	}{
		{name: "empty config succeeds"},
		{
			name:       "succeeded round-trips providerStatus and export",
			config:     `{"apiVersion":"mock.deployer.landscaper.gardener.cloud/v1alpha1","kind":"ProviderConfiguration","phase":"Succeeded","providerStatus":{"key1":"val1"},"export":{"key2":["a",1,true]}}`,
			wantStatus: `{"key1":"val1"}`,
			wantExport: `{"key2":["a",1,true]}`,
		},
		{name: "null export is no export", config: `{"export":null,"providerStatus":null}`},
		{name: "scalar export", config: `{"export":"text"}`, wantExport: `"text"`},
		{
			name:       "failed is terminal and keeps the provider status",
			config:     `{"phase":"Failed","providerStatus":{"k":"v"},"export":{"a":1}}`,
			wantStatus: `{"k":"v"}`,
			wantReason: ReasonFailed,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err := New().Reconcile(context.Background(), req(tt.config))
			if tt.wantReason != "" {
				de := classified(t, err, false, tt.wantReason)
				if !strings.Contains(de.Message, `phase "Failed"`) {
					t.Fatalf("message %q does not mention the requested phase", de.Message)
				}
			} else if err != nil {
				t.Fatalf("Reconcile: %v", err)
			}
			if got := string(res.ProviderStatus); got != tt.wantStatus {
				t.Errorf("ProviderStatus = %q, want %q", got, tt.wantStatus)
			}
			if got := string(res.Export); got != tt.wantExport {
				t.Errorf("Export = %q, want %q", got, tt.wantExport)
			}
			if tt.wantStatus == "" && res.ProviderStatus != nil {
				t.Errorf("ProviderStatus = %q, want nil", res.ProviderStatus)
			}
			if tt.wantExport == "" && res.Export != nil {
				t.Errorf("Export = %q, want nil", res.Export)
			}
		})
	}
}

func TestResultDoesNotAliasConfig(t *testing.T) {
	cfg := []byte(`{"export":{"a":1}}`)
	r := req("")
	r.Config = cfg
	res, err := New().Reconcile(context.Background(), r)
	if err != nil {
		t.Fatal(err)
	}
	for i := range cfg {
		cfg[i] = ' '
	}
	if string(res.Export) != `{"a":1}` {
		t.Fatalf("Export changed with the request's config: %q", res.Export)
	}
}

func TestTransientErrors(t *testing.T) {
	d := New()
	const config = `{"transientErrors":2,"export":{"x":1}}`
	steps := []struct {
		name          string
		item, job     string
		wantTransient bool
	}{
		{name: "attempt 1", item: "a", job: "job-1", wantTransient: true},
		{name: "other item counts on its own", item: "b", job: "job-1", wantTransient: true},
		{name: "attempt 2", item: "a", job: "job-1", wantTransient: true},
		{name: "attempt 3 succeeds", item: "a", job: "job-1"},
		{name: "attempt 4 still succeeds", item: "a", job: "job-1"},
		{name: "new job starts again", item: "a", job: "job-2", wantTransient: true},
		{name: "new job attempt 2", item: "a", job: "job-2", wantTransient: true},
		{name: "new job attempt 3", item: "a", job: "job-2"},
	}
	for _, st := range steps {
		r := req(config)
		r.Item, r.JobID = st.item, st.job
		res, err := d.Reconcile(context.Background(), r)
		if st.wantTransient {
			expectClass(t, err, true, ReasonTransient)
			if res.Export != nil {
				t.Fatalf("%s: transient attempt exported %q", st.name, res.Export)
			}
			continue
		}
		if err != nil {
			t.Fatalf("%s: %v", st.name, err)
		}
		if string(res.Export) != `{"x":1}` {
			t.Fatalf("%s: Export = %q", st.name, res.Export)
		}
	}
}

func TestTransientThenFailed(t *testing.T) {
	d := New()
	r := req(`{"transientErrors":1,"phase":"Failed"}`)
	_, err := d.Reconcile(context.Background(), r)
	expectClass(t, err, true, ReasonTransient)
	_, err = d.Reconcile(context.Background(), r)
	expectClass(t, err, false, ReasonFailed)
}

func TestTransientErrorsConcurrent(t *testing.T) {
	d := New()
	const workers, n = 8, 5
	errs := make(chan error, workers)
	for w := range workers {
		go func() {
			r := req(`{"transientErrors":5}`)
			r.Item = "item-" + string(rune('a'+w))
			var transient int
			for range n + 1 {
				if _, err := d.Reconcile(context.Background(), r); err != nil {
					transient++
				}
			}
			if transient != n {
				errs <- errors.New(r.Item + ": wrong number of transient errors")
				return
			}
			errs <- nil
		}()
	}
	for range workers {
		if err := <-errs; err != nil {
			t.Error(err)
		}
	}
}

func TestDuration(t *testing.T) {
	d := New()
	for _, op := range []string{"Reconcile", "Delete"} {
		run := d.Reconcile
		if op == "Delete" {
			run = d.Delete
		}
		t.Run(op+" takes the duration", func(t *testing.T) {
			start := time.Now()
			if _, err := run(context.Background(), req(`{"duration":"100ms"}`)); err != nil {
				t.Fatal(err)
			}
			if el := time.Since(start); el < 100*time.Millisecond {
				t.Fatalf("run took %v, want at least 100ms", el)
			}
		})
		t.Run(op+" is interrupted by cancellation", func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			time.AfterFunc(20*time.Millisecond, cancel)
			start := time.Now()
			_, err := run(ctx, req(`{"duration":"1h"}`))
			if el := time.Since(start); el > 5*time.Second {
				t.Fatalf("interrupted run took %v", el)
			}
			de := classified(t, err, false, ReasonInterrupted, core.CodeInterrupted)
			if !strings.Contains(de.Message, "context canceled") {
				t.Fatalf("message %q does not give the cause", de.Message)
			}
		})
		t.Run(op+" is interrupted by a deadline", func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
			defer cancel()
			_, err := run(ctx, req(`{"duration":"1h"}`))
			de := classified(t, err, false, ReasonInterrupted, core.CodeInterrupted)
			if !strings.Contains(de.Message, "deadline exceeded") {
				t.Fatalf("message %q does not give the cause", de.Message)
			}
		})
		t.Run(op+" with a done context and no duration", func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			cancel()
			_, err := run(ctx, req(`{}`))
			expectClass(t, err, false, ReasonInterrupted, core.CodeInterrupted)
		})
	}
}

func TestInterruptedAttemptIsNotCounted(t *testing.T) {
	d := New()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	r := req(`{"transientErrors":1}`)
	_, err := d.Reconcile(ctx, r)
	expectClass(t, err, false, ReasonInterrupted)
	_, err = d.Reconcile(context.Background(), r)
	expectClass(t, err, true, ReasonTransient)
	if _, err := d.Reconcile(context.Background(), r); err != nil {
		t.Fatal(err)
	}
}

func TestDelete(t *testing.T) {
	tests := []struct {
		name       string
		config     string
		wantReason string
	}{
		{name: "default succeeds", config: `{}`},
		{name: "failed item can be deleted", config: `{"phase":"Failed","transientErrors":3}`},
		{name: "deletePhase succeeded", config: `{"deletePhase":"Succeeded"}`},
		{name: "deletePhase failed", config: `{"deletePhase":"Failed"}`, wantReason: ReasonDeleteFailed},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := req(tt.config)
			r.Operation = core.OperationDelete
			res, err := New().Delete(context.Background(), r)
			if tt.wantReason != "" {
				de := classified(t, err, false, tt.wantReason)
				if !strings.Contains(de.Message, `deletePhase "Failed"`) {
					t.Fatalf("message %q does not mention deletePhase", de.Message)
				}
				return
			}
			if err != nil {
				t.Fatalf("Delete: %v", err)
			}
			if res.ProviderStatus != nil || res.Export != nil || res.State != nil {
				t.Fatalf("Delete returned %+v, want an empty result", res)
			}
		})
	}
	t.Run("deletePhase does not affect reconcile", func(t *testing.T) {
		if _, err := New().Reconcile(context.Background(), req(`{"deletePhase":"Failed"}`)); err != nil {
			t.Fatal(err)
		}
	})
}

func TestNormalizedYAMLConfig(t *testing.T) {
	const text = `
apiVersion: mock.deployer.landscaper.gardener.cloud/v1alpha1
kind: ProviderConfiguration
phase: Succeeded
duration: 10ms
transientErrors: 0
providerStatus:
  apiVersion: mock.deployer.landscaper.gardener.cloud/v1alpha1
  kind: ProviderStatus
  key1: val1
export:
  key2: val2
  list: [1, 2]
`
	cfg, err := deployer.NormalizeConfig(text)
	if err != nil {
		t.Fatal(err)
	}
	d := New()
	if err := d.Validate(cfg); err != nil {
		t.Fatalf("Validate: %v", err)
	}
	res, err := d.Reconcile(context.Background(), deployer.Request{Config: cfg})
	if err != nil {
		t.Fatalf("Reconcile: %v", err)
	}
	var status, export map[string]any
	if err := json.Unmarshal(res.ProviderStatus, &status); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(res.Export, &export); err != nil {
		t.Fatal(err)
	}
	if status["key1"] != "val1" || status["kind"] != "ProviderStatus" {
		t.Errorf("ProviderStatus = %s", res.ProviderStatus)
	}
	if list, _ := export["list"].([]any); export["key2"] != "val2" || len(list) != 2 {
		t.Errorf("Export = %s", res.Export)
	}

	// An empty config normalises to {} and means "succeed, export nothing".
	empty, err := deployer.NormalizeConfig("")
	if err != nil {
		t.Fatal(err)
	}
	if res, err := d.Reconcile(context.Background(), deployer.Request{Config: empty}); err != nil || res.Export != nil {
		t.Fatalf("empty config: %+v, %v", res, err)
	}

	// A YAML typo is caught at plan time.
	bad, err := deployer.NormalizeConfig("phase: Succeeded\nexports: {a: 1}\n")
	if err != nil {
		t.Fatal(err)
	}
	if err := d.Validate(bad); err == nil || !strings.Contains(err.Error(), `unknown field "exports"`) {
		t.Fatalf("Validate(typo) = %v", err)
	}
}

func BenchmarkReconcileZeroDuration(b *testing.B) {
	configs := []struct{ name, config string }{
		{"empty", `{}`},
		{"phase", `{"phase":"Succeeded"}`},
		{"full", `{"apiVersion":"mock.deployer.landscaper.gardener.cloud/v1alpha1","kind":"ProviderConfiguration","phase":"Succeeded","providerStatus":{"key1":"val1"},"export":{"key2":"val2"}}`},
	}
	for _, c := range configs {
		b.Run(c.name, func(b *testing.B) {
			d := New()
			r := req(c.config)
			ctx := context.Background()
			b.ReportAllocs()
			for b.Loop() {
				if _, err := d.Reconcile(ctx, r); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// Landscaper decodes deployer configs leniently: an unknown field warns at
// plan time and is ignored when the item runs.
func TestUnknownFieldsWarnAndAreIgnored(t *testing.T) {
	d := New()
	cfg := json.RawMessage(`{"phase":"Succeeded","phasee":"Failed","export":{"a":1}}`)
	err := d.Validate(cfg)
	if !deployer.IsWarning(err) || !strings.Contains(err.Error(), `unknown field "phasee"`) {
		t.Fatalf("Validate: %v, want a warning naming phasee", err)
	}
	res, err := d.Reconcile(context.Background(), deployer.Request{Operation: core.OperationReconcile, Config: cfg, Item: "i"})
	if err != nil || string(res.Export) != `{"a":1}` {
		t.Fatalf("Reconcile: %s %v", res.Export, err)
	}
}

// Every deploy item phase is accepted: Succeeded succeeds, failed phases
// fail at once, the others keep the item running (requeued) as in
// Landscaper; phase overrides initialPhase.
func TestPhases(t *testing.T) {
	const (
		ok = iota
		fail
		requeue
	)
	for _, tc := range []struct {
		config string
		want   int
	}{
		{`{}`, ok},
		{`{"phase":"Succeeded"}`, ok},
		{`{"phase":"Failed"}`, fail},
		{`{"phase":"DeleteFailed"}`, fail},
		{`{"phase":"Init"}`, requeue},
		{`{"phase":"Progressing"}`, requeue},
		{`{"phase":"Completing"}`, requeue},
		{`{"phase":"InitDelete"}`, requeue},
		{`{"phase":"Deleting"}`, requeue},
		{`{"initialPhase":"Progressing"}`, requeue},
		{`{"initialPhase":"Failed"}`, fail},
		{`{"initialPhase":"Succeeded"}`, ok},
		{`{"initialPhase":"Progressing","phase":"Succeeded"}`, ok},
		{`{"initialPhase":"Succeeded","phase":"Progressing"}`, requeue},
		{`{"continuousReconcile":{"every":"1m"},"export":1}`, ok},
	} {
		res, err := New().Reconcile(context.Background(), req(tc.config))
		switch tc.want {
		case ok:
			if err != nil || res.RequeueAfter != 0 {
				t.Errorf("%s: err %v requeue %v, want success", tc.config, err, res.RequeueAfter)
			}
		case fail:
			if err == nil {
				t.Errorf("%s: succeeded, want a failure", tc.config)
				continue
			}
			expectClass(t, err, false, ReasonFailed)
		case requeue:
			if err != nil || res.RequeueAfter != RequeueInterval {
				t.Errorf("%s: err %v requeue %v, want a requeue after %v", tc.config, err, res.RequeueAfter, RequeueInterval)
			}
		}
	}
}
