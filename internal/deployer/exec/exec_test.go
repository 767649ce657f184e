package exec

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/landscaper-tf/terraform-provider-landscaper/internal/core"
	"github.com/landscaper-tf/terraform-provider-landscaper/internal/deployer"
)

// shConfig returns a config running script with sh -c, plus extra fields.
func shConfig(t *testing.T, script string, extra map[string]any) json.RawMessage {
	t.Helper()
	cfg := map[string]any{"command": []string{"sh", "-c", script}}
	for k, v := range extra {
		cfg[k] = v
	}
	raw, err := json.Marshal(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return raw
}

func newTestDeployer(t *testing.T) *Deployer {
	return New(Options{DefaultWorkingDir: t.TempDir(), GracePeriod: time.Second})
}

func asError(t *testing.T, err error) *core.Error {
	t.Helper()
	var de *core.Error
	if !errors.As(err, &de) {
		t.Fatalf("want *core.Error, got %T: %v", err, err)
	}
	return de
}

func wantError(t *testing.T, err error, transient bool, reason string, msgParts ...string) {
	t.Helper()
	de := asError(t, err)
	if de.Transient != transient || de.Reason != reason {
		t.Fatalf("got transient=%v reason=%q (%v), want transient=%v reason=%q", de.Transient, de.Reason, de, transient, reason)
	}
	for _, p := range msgParts {
		if !strings.Contains(de.Message, p) {
			t.Errorf("message %q does not contain %q", de.Message, p)
		}
	}
}

// pollFile waits until a script has written a line to path and returns it.
func pollFile(path string) (string, bool) {
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if b, err := os.ReadFile(path); err == nil && bytes.HasSuffix(b, []byte("\n")) {
			return strings.TrimSpace(string(b)), true
		}
	}
	return "", false
}

func waitForFile(t *testing.T, path string) string {
	t.Helper()
	s, ok := pollFile(path)
	if !ok {
		t.Fatalf("%s was not written", path)
	}
	return s
}

// assertGone checks that pid exits soon; a zombie counts as gone since it
// only waits for its new parent to reap it.
func assertGone(t *testing.T, pidText string) {
	t.Helper()
	pid, err := strconv.Atoi(pidText)
	if err != nil {
		t.Fatalf("bad pid %q", pidText)
	}
	for deadline := time.Now().Add(3 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if errors.Is(syscall.Kill(pid, 0), syscall.ESRCH) {
			return
		}
		stat, err := os.ReadFile("/proc/" + pidText + "/stat")
		if err != nil {
			return
		}
		if i := bytes.LastIndexByte(stat, ')'); i >= 0 && bytes.HasPrefix(stat[i:], []byte(") Z")) {
			return
		}
	}
	_ = syscall.Kill(pid, syscall.SIGKILL)
	t.Errorf("process %d outlived the run", pid)
}

func TestValidate(t *testing.T) {
	d := New(Options{})
	tests := []struct {
		name   string
		config string
		want   string // substring of the message; "" means valid
	}{
		{"valid", `{"command":["sh","-c","true"],"env":{"A":"b"},"workingDir":"x","importValues":{"a":[1]}}`, ""},
		{"valid minimal", `{"command":["true"]}`, ""},
		{"missing command", `{"env":{}}`, "command is required: list"},
		{"misspelled command", `{"comand":["true"],"workDir":"x"}`,
			`command is required (the config has "comand", which this deployer does not know: a misspelling of "command"?)`},
		{"null command", `{"command":null}`, "command is required"},
		{"empty command", `{"command":[]}`, "command is required"},
		{"empty program", `{"command":["","x"]}`, "must not be empty"},
		{"command not a list", `{"command":"sh -c true"}`, "cannot unmarshal"},
		{"env value not a string", `{"command":["true"],"env":{"A":1}}`, "cannot unmarshal"},
		{"bad env name", `{"command":["true"],"env":{"A=B":"c"}}`, "invalid variable name"},
		{"workingDir not a string", `{"command":["true"],"workingDir":1}`, "cannot unmarshal"},
		{"array", `[1]`, "must be an object"},
		{"null", `null`, "must be an object"},
		{"empty", ``, "must be an object"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := d.Validate(json.RawMessage(tt.config))
			if tt.want == "" {
				if err != nil {
					t.Fatalf("unexpected error: %v", err)
				}
				return
			}
			wantError(t, err, false, "ConfigurationProblem", tt.want)
			if de := asError(t, err); len(de.Codes) != 1 || de.Codes[0] != core.CodeConfigurationProblem {
				t.Errorf("codes = %v", de.Codes)
			}
		})
	}
}

func TestEnvironmentContract(t *testing.T) {
	d := New(Options{
		BaseEnv:           []string{"PATH=" + os.Getenv("PATH"), "BASE_ONLY=base", "OVERRIDDEN=base"},
		DefaultWorkingDir: t.TempDir(),
	})
	script := `test -e "$EXPORTS_PATH" && exit 10
test -d "$STATE_PATH" || exit 11
printf '{"op":"%s","item":"%s","exec":"%s","job":"%s","base":"%s","overridden":"%s","cfg":"%s","imports":%s}' \
  "$OPERATION" "$DEPLOY_ITEM_NAME" "$EXECUTION_NAME" "$JOB_ID" "$BASE_ONLY" "$OVERRIDDEN" "$CFG_ONLY" "$(cat "$IMPORTS_PATH")" >"$EXPORTS_PATH"`
	req := deployer.Request{
		Execution: "exec1", Item: "item1", JobID: "job1",
		Config: shConfig(t, script, map[string]any{
			"env":          map[string]string{"OVERRIDDEN": "config", "CFG_ONLY": "cfg", "OPERATION": "ignored"},
			"importValues": map[string]any{"a": []int{1, 2}},
		}),
	}
	res, err := d.Reconcile(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	var got map[string]any
	if err := json.Unmarshal(res.Export, &got); err != nil {
		t.Fatalf("export %s: %v", res.Export, err)
	}
	want := map[string]any{
		"op": "RECONCILE", "item": "item1", "exec": "exec1", "job": "job1",
		"base": "base", "overridden": "config", "cfg": "cfg",
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s = %v, want %v", k, got[k], v)
		}
	}
	if imports, _ := json.Marshal(got["imports"]); string(imports) != `{"a":[1,2]}` {
		t.Errorf("imports = %s", imports)
	}
	if res.State != nil {
		t.Errorf("empty state dir gave state of %d bytes", len(res.State))
	}

	// Without importValues the imports file holds an empty object, and
	// Delete runs with OPERATION=DELETE and ignores the export.
	req.Config = shConfig(t, `test "$OPERATION" = DELETE || exit 12
test "$(cat "$IMPORTS_PATH")" = "{}" || exit 13
echo '{"x":1}' >"$EXPORTS_PATH"`, nil)
	res, err = d.Delete(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	if res.Export != nil {
		t.Errorf("delete export = %s, want nil", res.Export)
	}
}

func TestExports(t *testing.T) {
	d := newTestDeployer(t)
	tests := []struct {
		name, script, want string
	}{
		{"yaml", "printf 'a: 1\\nb: [x, z]\\n' >\"$EXPORTS_PATH\"", `{"a":1,"b":["x","z"]}`},
		{"json scalar", `echo '"hello"' >"$EXPORTS_PATH"`, `"hello"`},
		{"json keeps big numbers", `echo '{"n": 12345678901234567890123}' >"$EXPORTS_PATH"`, `{"n":12345678901234567890123}`},
		{"no file", `true`, ""},
		{"empty file", `: >"$EXPORTS_PATH"`, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err := d.Reconcile(context.Background(), deployer.Request{Config: shConfig(t, tt.script, nil)})
			if err != nil {
				t.Fatal(err)
			}
			if string(res.Export) != tt.want {
				t.Errorf("export = %q, want %q", res.Export, tt.want)
			}
			if tt.want == "" && res.Export != nil {
				t.Errorf("export = %q, want nil", res.Export)
			}
		})
	}

	_, err := d.Reconcile(context.Background(), deployer.Request{Config: shConfig(t, `echo '{' >"$EXPORTS_PATH"`, nil)})
	wantError(t, err, false, "InvalidExport", "neither JSON nor YAML")
}

func TestExitCodes(t *testing.T) {
	d := newTestDeployer(t)
	_, err := d.Reconcile(context.Background(), deployer.Request{Config: shConfig(t, "echo try later >&2; exit 75", nil)})
	wantError(t, err, true, "TransientFailure", "exit code 75", "try later")

	script := `for i in $(seq 1 30); do echo "noise $i" >&2; done; echo "the real reason" >&2; exit 3`
	_, err = d.Reconcile(context.Background(), deployer.Request{Config: shConfig(t, script, nil)})
	wantError(t, err, false, "CommandFailed", "exit code 3", "the real reason", "noise 30")
	if msg := asError(t, err).Message; strings.Contains(msg, "noise 5\n") {
		t.Errorf("message holds more than the tail: %q", msg)
	}

	_, err = d.Reconcile(context.Background(), deployer.Request{Config: json.RawMessage(`{"command":["no-such-program-xyz"]}`)})
	wantError(t, err, false, "CommandFailed", "cannot start", "no-such-program-xyz")

	_, err = d.Reconcile(context.Background(), deployer.Request{Config: json.RawMessage(`{"command":["./not-there.sh"]}`)})
	wantError(t, err, false, "CommandFailed", "cannot start")
}

func TestStatePersistence(t *testing.T) {
	d := newTestDeployer(t)
	var logs []string
	req := deployer.Request{
		Config: shConfig(t, `mkdir -p "$STATE_PATH/sub" && echo hello >"$STATE_PATH/sub/greeting" && chmod 0755 "$STATE_PATH/sub/greeting"
ln -s /etc/passwd "$STATE_PATH/link"`, nil),
		Log: func(s string) { logs = append(logs, s) },
	}
	res, err := d.Reconcile(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.State) == 0 {
		t.Fatal("no state returned")
	}
	if !strings.Contains(strings.Join(logs, "\n"), `skipping "link"`) {
		t.Errorf("no note about the skipped symlink in %q", logs)
	}

	req.State = res.State
	req.Config = shConfig(t, `test -L "$STATE_PATH/link" && exit 10
test -x "$STATE_PATH/sub/greeting" || exit 11
printf '"%s"' "$(cat "$STATE_PATH/sub/greeting")" >"$EXPORTS_PATH"`, nil)
	res2, err := d.Reconcile(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	if string(res2.Export) != `"hello"` {
		t.Errorf("export = %s", res2.Export)
	}
	if !bytes.Equal(res2.State, res.State) {
		t.Error("unchanged state directory packed to different bytes")
	}

	// A failing run still records its partial progress.
	req.Config = shConfig(t, `echo partial >"$STATE_PATH/progress"; exit 1`, nil)
	res3, err := d.Reconcile(context.Background(), req)
	wantError(t, err, false, "CommandFailed", "exit code 1")
	if bytes.Equal(res3.State, res.State) || len(res3.State) == 0 {
		t.Error("state of the failed run was not returned")
	}
}

func TestStateTooLarge(t *testing.T) {
	prev, err := newTestDeployer(t).Reconcile(context.Background(), deployer.Request{
		Config: shConfig(t, `echo small >"$STATE_PATH/f"`, nil),
	})
	if err != nil {
		t.Fatal(err)
	}
	d := New(Options{MaxStateBytes: 1024, DefaultWorkingDir: t.TempDir()})
	res, err := d.Reconcile(context.Background(), deployer.Request{
		State:  prev.State,
		Config: shConfig(t, `head -c 8192 /dev/urandom >"$STATE_PATH/big"`, nil),
	})
	wantError(t, err, false, "StateTooLarge", "allowed 1024 bytes")
	if !bytes.Equal(res.State, prev.State) {
		t.Error("previous state was not kept")
	}
}

func TestUnpackRejectsEscapingEntries(t *testing.T) {
	for _, name := range []string{"../evil", "/abs", "a/../../evil"} {
		var buf bytes.Buffer
		gz := gzip.NewWriter(&buf)
		tw := tar.NewWriter(gz)
		if err := tw.WriteHeader(&tar.Header{Name: name, Typeflag: tar.TypeReg, Mode: 0o644, Size: 1}); err != nil {
			t.Fatal(err)
		}
		_, _ = tw.Write([]byte("x"))
		_ = tw.Close()
		_ = gz.Close()
		if err := unpackState(buf.Bytes(), t.TempDir()); err == nil {
			t.Errorf("%q: unpacked without error", name)
		}
	}
	_, err := newTestDeployer(t).Reconcile(context.Background(), deployer.Request{
		State: []byte("not gzip"), Config: shConfig(t, "true", nil),
	})
	wantError(t, err, false, "InvalidState")
}

func TestCancellationKillsProcessGroup(t *testing.T) {
	d := newTestDeployer(t)
	pids := filepath.Join(t.TempDir(), "pids")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		pollFile(pids)
		cancel()
	}()
	start := time.Now()
	_, err := d.Reconcile(ctx, deployer.Request{
		Config: shConfig(t, `sleep 30 & echo $! >"$PIDS"; sleep 30; wait`, map[string]any{"env": map[string]string{"PIDS": pids}}),
	})
	wantError(t, err, false, ReasonInterrupted, "SIGTERM")
	if de := asError(t, err); len(de.Codes) != 1 || de.Codes[0] != core.CodeInterrupted {
		t.Errorf("codes = %v", de.Codes)
	}
	if elapsed := time.Since(start); elapsed > 10*time.Second {
		t.Errorf("canceled run took %s", elapsed)
	}
	assertGone(t, waitForFile(t, pids))
}

func TestCancellationEscalatesToSIGKILL(t *testing.T) {
	d := New(Options{GracePeriod: 200 * time.Millisecond, DefaultWorkingDir: t.TempDir()})
	ready := filepath.Join(t.TempDir(), "ready")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		pollFile(ready)
		cancel()
	}()
	start := time.Now()
	_, err := d.Reconcile(ctx, deployer.Request{
		Config: shConfig(t, `trap '' TERM; echo $$ >"$READY"; sleep 30; sleep 30`, map[string]any{"env": map[string]string{"READY": ready}}),
	})
	wantError(t, err, false, ReasonInterrupted, "SIGTERM", "SIGKILL", "200ms")
	if elapsed := time.Since(start); elapsed > 10*time.Second {
		t.Errorf("canceled run took %s", elapsed)
	}
	assertGone(t, waitForFile(t, ready))
}

func TestAlreadyCanceled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	res, err := newTestDeployer(t).Reconcile(ctx, deployer.Request{State: []byte("prev"), Config: shConfig(t, "true", nil)})
	wantError(t, err, false, ReasonInterrupted)
	if string(res.State) != "prev" {
		t.Errorf("state = %q", res.State)
	}
}

func TestStragglersAreKilled(t *testing.T) {
	d := newTestDeployer(t)
	pid := filepath.Join(t.TempDir(), "pid")
	start := time.Now()
	// The background sleep also holds stdout open, which must not block the run.
	res, err := d.Reconcile(context.Background(), deployer.Request{
		Config: shConfig(t, `sleep 30 & echo $! >"$PID"; echo '"ok"' >"$EXPORTS_PATH"`, map[string]any{"env": map[string]string{"PID": pid}}),
	})
	if err != nil {
		t.Fatal(err)
	}
	if string(res.Export) != `"ok"` {
		t.Errorf("export = %s", res.Export)
	}
	if elapsed := time.Since(start); elapsed > 10*time.Second {
		t.Errorf("run took %s", elapsed)
	}
	assertGone(t, waitForFile(t, pid))
}

func TestEscapedProcessDoesNotBlock(t *testing.T) {
	if _, err := lookPath("setsid", os.Environ()); err != nil {
		t.Skip("setsid not available")
	}
	start := time.Now()
	// setsid leaves the process group, so only the drain timeout ends the run.
	_, err := newTestDeployer(t).Reconcile(context.Background(), deployer.Request{
		Config: shConfig(t, `setsid sleep 2 & echo done`, nil),
	})
	if err != nil {
		t.Fatal(err)
	}
	if elapsed := time.Since(start); elapsed > 10*time.Second {
		t.Errorf("run took %s", elapsed)
	}
}

func TestWorkingDir(t *testing.T) {
	base := t.TempDir()
	if err := os.Mkdir(filepath.Join(base, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	d := New(Options{DefaultWorkingDir: base})
	resolved, err := filepath.EvalSymlinks(base)
	if err != nil {
		t.Fatal(err)
	}
	for wd, want := range map[string]string{
		"":                         resolved,
		"sub":                      filepath.Join(resolved, "sub"),
		filepath.Join(base, "sub"): filepath.Join(resolved, "sub"),
	} {
		res, err := d.Reconcile(context.Background(), deployer.Request{
			Config: shConfig(t, `printf '"%s"' "$(pwd -P)" >"$EXPORTS_PATH"`, map[string]any{"workingDir": wd}),
		})
		if err != nil {
			t.Fatalf("workingDir %q: %v", wd, err)
		}
		if got, _ := json.Marshal(want); string(res.Export) != string(got) {
			t.Errorf("workingDir %q: ran in %s, want %s", wd, res.Export, got)
		}
	}

	// A program named by a relative path is found in the working directory.
	script := "#!/bin/sh\necho '\"script\"' >\"$EXPORTS_PATH\"\n"
	if err := os.WriteFile(filepath.Join(base, "sub", "run.sh"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	res, err := d.Reconcile(context.Background(), deployer.Request{
		Config: json.RawMessage(`{"command":["./run.sh"],"workingDir":"sub"}`),
	})
	if err != nil || string(res.Export) != `"script"` {
		t.Errorf("relative program: export %s, error %v", res.Export, err)
	}

	_, err = d.Reconcile(context.Background(), deployer.Request{
		Config: shConfig(t, "true", map[string]any{"workingDir": "missing"}),
	})
	wantError(t, err, false, "ConfigurationProblem", "does not exist", filepath.Join(base, "missing"))
}

func TestOutputReachesLog(t *testing.T) {
	var logs []string
	_, err := newTestDeployer(t).Reconcile(context.Background(), deployer.Request{
		Config: shConfig(t, `echo out1; echo err1 >&2; printf 'no newline'`, nil),
		Log:    func(s string) { logs = append(logs, s) },
	})
	if err != nil {
		t.Fatal(err)
	}
	joined := strings.Join(logs, "\n")
	for _, want := range []string{"stdout: out1", "stderr: err1", "stdout: no newline"} {
		if !strings.Contains(joined, want) {
			t.Errorf("log %q lacks %q", joined, want)
		}
	}
}

func TestTailIsBounded(t *testing.T) {
	var tl tail
	for i := range 1000 {
		tl.add(strings.Repeat("x", 500) + strconv.Itoa(i))
	}
	if len(tl.lines) > maxTailLines {
		t.Errorf("tail holds %d lines", len(tl.lines))
	}
	s := tl.String()
	if len(s) > maxTailBytes || !strings.HasSuffix(s, "999") {
		t.Errorf("tail of %d bytes ends in %q", len(s), s[len(s)-5:])
	}
}

// Whatever happened to an item's state, a successful DELETE deletes it: a
// state that cannot be restored is replaced by an empty STATE_PATH, and a
// state that has grown too large does not matter once the item is gone.
func TestDeleteIsNotBlockedByState(t *testing.T) {
	var lines []string
	d := New(Options{MaxStateBytes: 1024, DefaultWorkingDir: t.TempDir()})
	res, err := d.Delete(context.Background(), deployer.Request{
		Operation: core.OperationDelete,
		State:     []byte("not a gzip tar"),
		Config:    shConfig(t, `test -z "$(ls -A "$STATE_PATH")" && head -c 8192 /dev/urandom >"$STATE_PATH/big"`, nil),
		Log:       func(m string) { lines = append(lines, m) },
	})
	if err != nil {
		t.Fatal(err)
	}
	if res.State != nil {
		t.Errorf("a deleted item keeps state: %d bytes", len(res.State))
	}
	if len(lines) == 0 || !strings.Contains(lines[0], "empty STATE_PATH") {
		t.Errorf("the reset was not logged: %q", lines)
	}
	// RECONCILE still refuses a broken state: it would lose data.
	_, err = d.Reconcile(context.Background(), deployer.Request{State: []byte("not a gzip tar"), Config: shConfig(t, "true", nil)})
	wantError(t, err, false, "InvalidState")
}

// Landscaper decodes deployer configs leniently: an unknown field warns at
// plan time and is ignored when the item runs.
func TestUnknownFieldsWarnAndAreIgnored(t *testing.T) {
	d := New(Options{})
	cfg := json.RawMessage(`{"command":["true"],"cmd":"x"}`)
	err := d.Validate(cfg)
	if !deployer.IsWarning(err) || !strings.Contains(err.Error(), `unknown field "cmd"`) {
		t.Fatalf("Validate: %v, want a warning naming cmd", err)
	}
	if _, err := d.Reconcile(context.Background(), deployer.Request{Operation: core.OperationReconcile, Config: cfg, Item: "i"}); err != nil {
		t.Fatalf("Reconcile: %v", err)
	}
}
