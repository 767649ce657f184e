// Package acctest holds what the acceptance and end-to-end tests of every
// package share: a World that exec deploy items act on, helpers to read
// plans and state, and a Workspace that drives the real terraform CLI
// against the real provider binary.
package acctest

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/plancheck"
)

// UnreachableKubeconfig is a valid kubeconfig of a cluster nobody serves:
// targets for items that never connect (exec), or for testing what an
// unreachable cluster does.
const UnreachableKubeconfig = `apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {server: "https://127.0.0.1:1"}}]
contexts: [{name: c, context: {cluster: c, user: u}}]
current-context: c
users: [{name: u, user: {token: not-a-real-token}}]
`

// World is the outside a test's exec items act on: a run log every item
// appends "<item> <OPERATION>" to, and flag files that make an item fail.
type World struct {
	T   testing.TB
	Dir string
}

// NewWorld returns a World in a fresh temporary directory.
func NewWorld(t testing.TB) *World {
	return &World{T: t, Dir: t.TempDir()}
}

// Script is the command of an exec item acting on a World whose directory
// is in $W. It logs the run, then fails if the flag
// fail-<item>-<OPERATION> exists, and exports what $EXPORT says.
const Script = `echo "$DEPLOY_ITEM_NAME $OPERATION" >> "$W/runs.log"
if [ -e "$W/fail-$DEPLOY_ITEM_NAME-$OPERATION" ]; then echo "flagged to fail" >&2; exit 3; fi
if [ -n "$EXPORT" ]; then printf '%s' "$EXPORT" > "$EXPORTS_PATH"; fi`

// Flag creates a flag file.
func (w *World) Flag(name string) {
	w.T.Helper()
	if err := os.WriteFile(filepath.Join(w.Dir, name), nil, 0o600); err != nil {
		w.T.Fatal(err)
	}
}

// Unflag removes a flag file.
func (w *World) Unflag(name string) {
	w.T.Helper()
	if err := os.Remove(filepath.Join(w.Dir, name)); err != nil && !os.IsNotExist(err) {
		w.T.Fatal(err)
	}
}

// Runs returns the run log as "<item>:<OPERATION>" entries and empties it.
func (w *World) Runs() []string {
	w.T.Helper()
	p := filepath.Join(w.Dir, "runs.log")
	b, err := os.ReadFile(p)
	if os.IsNotExist(err) {
		return nil
	}
	if err != nil {
		w.T.Fatal(err)
	}
	_ = os.Remove(p)
	return strings.Fields(strings.ReplaceAll(strings.TrimSpace(string(b)), " ", ":"))
}

// ExpectRuns checks the set of runs since the last call, ignoring order.
func (w *World) ExpectRuns(want ...string) error {
	got := w.Runs()
	slices.Sort(got)
	want = slices.Sorted(slices.Values(want))
	if strings.Join(got, " ") != strings.Join(want, " ") {
		return fmt.Errorf("runs %v, want %v", got, want)
	}
	return nil
}

// PlanFunc adapts a function to plancheck.PlanCheck.
type PlanFunc func(req plancheck.CheckPlanRequest) error

// CheckPlan implements plancheck.PlanCheck.
func (f PlanFunc) CheckPlan(_ context.Context, req plancheck.CheckPlanRequest, resp *plancheck.CheckPlanResponse) {
	resp.Error = f(req)
}

// Dig walks nested JSON objects; nil when a key is missing.
func Dig(v any, keys ...string) any {
	for _, k := range keys {
		m, ok := v.(map[string]any)
		if !ok {
			return nil
		}
		v = m[k]
	}
	return v
}
