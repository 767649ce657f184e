#!/usr/bin/env bash
# End-to-end benchmark: a layered DAG of zero-latency deploy items as ONE
# landscaper_execution ("ours") versus the same DAG as terraform_data
# resources with depends_on ("native"). For each: apply from empty state,
# no-op plan (must report no changes), destroy; median of BENCH_RUNS runs.
#
#   BENCH_RUNS=3      runs per measurement (median reported)
#   BENCH_STRICT=1    exit 1 if a goal is missed (default: report only)
#   TERRAFORM=...     terraform binary (default: terraform on PATH)
#   BENCH_LAYERS=10 BENCH_WIDTH=40 BENCH_FANIN=4   DAG shape
#   BENCH_ONLY="tree treesecret"   run only these (native floor ours inst tree
#                     treesecret one treefloor; treefloor needs tree)
set -euo pipefail

runs=${BENCH_RUNS:-3} strict=${BENCH_STRICT:-0}
layers=${BENCH_LAYERS:-10} width=${BENCH_WIDTH:-40} fanin=${BENCH_FANIN:-4}
apply_goal=10 plan_goal=3 # native/ours must reach these ratios
floor_goal=1.3             # ours/floor no-op plan must stay within this
tree_goal=0.3              # seconds the 1,000-item tree's no-op plan may take over a 1-item execution's
secret_goal=0.05           # seconds the tree's no-op plan may take more with its tag a sensitive import
secret_apply_goal=1.2      # times the tree's apply the secret tree's may take
tf=${TERRAFORM:-terraform}
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export CHECKPOINT_DISABLE=1 TF_IN_AUTOMATION=1 TF_INPUT=0
unset TF_LOG TF_LOG_PATH TF_LOG_PROVIDER

# gen native|ours: prints the DAG config. Node w of layer l>0 depends on
# nodes (w + k*width/fanin) % width, k in 0..fanin-1, of layer l-1.
gen() {
  awk -v kind="$1" -v L="$layers" -v W="$width" -v K="$fanin" 'BEGIN {
    step = int(W / K)
    if (kind == "ours") {
      print "terraform {\n  required_providers {\n    landscaper = { source = \"landscaper-tf/landscaper\" }\n  }\n}\n"
      print "resource \"landscaper_execution\" \"dag\" {\n  name = \"dag\"\n  deploy_items = {"
    }
    if (kind == "floor") print "resource \"terraform_data\" \"floor\" {\n  input = {"
    for (l = 0; l < L; l++) for (w = 0; w < W; w++) {
      deps = ""
      for (k = 0; l > 0 && k < K; k++) {
        d = (w + k * step) % W
        deps = deps (k ? ", " : "") (kind != "native" ? sprintf("\"l%d-%d\"", l - 1, d) : sprintf("terraform_data.l%d_%d", l - 1, d))
      }
      if (kind == "ours" || kind == "floor")
        printf "    \"l%d-%d\" = { type = \"mock\"%s }\n", l, w, (deps == "" ? "" : ", depends_on = [" deps "]")
      else
        printf "resource \"terraform_data\" \"l%d_%d\" {%s}\n", l, w, (deps == "" ? "" : " depends_on = [" deps "] ")
    }
    if (kind == "ours" || kind == "floor") print "  }\n}"
  }'
}

# timed LOG CMD...: runs CMD, appends its output to LOG, prints seconds.
# Returns CMD's exit code.
timed() {
  local log=$1 t0 rc=0
  shift
  t0=$EPOCHREALTIME
  "$@" >>"$log" 2>&1 || rc=$?
  awk -v a="$t0" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.3f\n", b - a }'
  return "$rc"
}

median() { printf '%s\n' "$@" | sort -g | awk '{ v[NR] = $1 } END { print (NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2) }'; }

fail() { echo "ERROR: $1 (log: last lines of $2)" >&2; tail -n 30 "$2" >&2; exit 1; }

# bench NAME...: runs apply, no-op plan and destroy $runs times in
# $tmp/NAME and sets med_NAME_{apply,plan,destroy}. Several names run in
# interleaved rounds (one round of each, then the next), so that a load
# that comes and goes weighs on each alike and their ratios hold. Names
# not in BENCH_ONLY (when set) are skipped.
bench() {
  local names=() name dir log ta tp td rc
  for name in "$@"; do
    if [[ -z ${BENCH_ONLY:-} || " $BENCH_ONLY " == *" $name "* ]]; then names+=("$name"); fi
  done
  local -A applies=() plans=() destroys=()
  for ((i = 1; i <= runs; i++)); do
    for name in "${names[@]}"; do
      dir=$tmp/$name log=$tmp/$name.log
      rm -f "$dir"/terraform.tfstate*
      ta=$(timed "$log" "$tf" -chdir="$dir" apply -auto-approve -input=false -no-color) || fail "$name apply failed" "$log"
      rc=0
      tp=$(timed "$log" "$tf" -chdir="$dir" plan -input=false -no-color -detailed-exitcode) || rc=$?
      ((rc == 0)) || fail "$name no-op plan exited $rc (2 = changes planned, 1 = error)" "$log"
      td=$(timed "$log" "$tf" -chdir="$dir" destroy -auto-approve -input=false -no-color) || fail "$name destroy failed" "$log"
      applies[$name]+="$ta " plans[$name]+="$tp " destroys[$name]+="$td "
      printf '  %-10s run %d/%d: apply %6.2fs  plan %6.2fs  destroy %6.2fs\n' "$name" "$i" "$runs" "$ta" "$tp" "$td"
    done
  done
  for name in "${names[@]}"; do
    # shellcheck disable=SC2086 # the lists split on purpose
    printf -v "med_${name}_apply" '%s' "$(median ${applies[$name]})"
    # shellcheck disable=SC2086
    printf -v "med_${name}_plan" '%s' "$(median ${plans[$name]})"
    # shellcheck disable=SC2086
    printf -v "med_${name}_destroy" '%s' "$(median ${destroys[$name]})"
  done
}

# ran NAME: whether bench ran NAME.
ran() { [[ -n $(eval "echo \${med_${1}_apply:-}") ]]; }

echo "Building the provider..."
mkdir -p "$tmp/bin" "$tmp/native" "$tmp/ours" "$tmp/floor" "$tmp/inst/blueprint" "$tmp/tree" "$tmp/treesecret" "$tmp/one" "$tmp/treefloor"
# Built as releases are (.goreleaser.yml): what users run is what is measured.
(cd "$root" && go build -trimpath -ldflags "-s -w" -o "$tmp/bin/terraform-provider-landscaper" .)
cat >"$tmp/dev.tfrc" <<EOF
provider_installation {
  dev_overrides {
    "landscaper-tf/landscaper" = "$tmp/bin"
  }
  direct {}
}
EOF
# dev_overrides: no `terraform init` for ours (it would query the registry).
# Native needs none either: terraform_data is built in.
export TF_CLI_CONFIG_FILE=$tmp/dev.tfrc
gen native >"$tmp/native/main.tf"
gen ours >"$tmp/ours/main.tf"
# Terraform's own floor for a plan of this configuration: one terraform_data
# whose input holds the same 400-entry map as deploy_items.
gen floor >"$tmp/floor/main.tf"
# The same DAG as one landscaper_installation whose blueprint renders it.
cat >"$tmp/inst/main.tf" <<TF
terraform {
  required_providers {
    landscaper = { source = "landscaper-tf/landscaper" }
  }
}
resource "landscaper_installation" "dag" {
  name      = "dag"
  blueprint = { path = "$tmp/inst/blueprint" }
  imports   = { layers = $layers, width = $width, fanin = $fanin }
}
TF
cat >"$tmp/inst/blueprint/blueprint.yaml" <<'YAML'
apiVersion: landscaper.gardener.cloud/v1alpha1
kind: Blueprint
imports:
  - {name: layers, type: data, schema: {type: integer}}
  - {name: width, type: data, schema: {type: integer}}
  - {name: fanin, type: data, schema: {type: integer}}
deployExecutions:
  - name: dag
    type: GoTemplate
    template: |
      {{- $w := int .imports.width }}{{ $k := int .imports.fanin }}{{ $step := div $w $k }}
      deployItems:
      {{- range $l := until (int .imports.layers) }}{{ range $n := until $w }}
        - name: l{{ $l }}-{{ $n }}
          type: landscaper.gardener.cloud/mock
          {{- if gt $l 0 }}
          dependsOn: [{{ range $i := until $k }}{{ if $i }}, {{ end }}l{{ sub $l 1 }}-{{ mod (add $n (mul $i $step)) $w }}{{ end }}]
          {{- end }}
      {{- end }}{{ end }}
YAML

echo "DAG: $layers layers x $width nodes, fan-in $fanin ($((layers * width)) nodes); $("$tf" version | head -n1); $runs run(s), median"
# A tree of 50 sub-installations x 20 mock items (1,000 items) from the
# component of internal/provider/testdata/installation/bench.
cat >"$tmp/tree/main.tf" <<TF
terraform {
  required_providers {
    landscaper = { source = "landscaper-tf/landscaper" }
  }
}
resource "landscaper_installation" "tree" {
  name      = "tree"
  blueprint = { ref = "root" }
  component = {
    name         = "example.com/bench"
    version      = "v1.0.0"
    constructors = ["$root/internal/provider/testdata/installation/bench/component-constructor.yaml"]
  }
  imports = { subs = 50, items = 20, tag = "bench" }
}
TF

# The same tree with the tag every item renders a secret: each render of it
# is followed by the masking shadow's, and every item's config is masked.
sed -e 's/imports = { subs = 50, items = 20, tag = "bench" }/imports           = { subs = 50, items = 20 }\n  sensitive_imports = { tag = "bench-s3cret" }/' \
  "$tmp/tree/main.tf" >"$tmp/treesecret/main.tf"
grep -q sensitive_imports "$tmp/treesecret/main.tf" || { echo "ERROR: treesecret: the tree's imports changed" >&2; exit 1; }

# A 1-item execution: the baseline a tree's no-op plan is held to.
cat >"$tmp/one/main.tf" <<TF
terraform {
  required_providers {
    landscaper = { source = "landscaper-tf/landscaper" }
  }
}
resource "landscaper_execution" "one" {
  name         = "one"
  deploy_items = { a = { type = "mock" } }
}
TF

bench native
bench floor
bench ours
bench inst
# The secret tree's cost is a ratio to the tree's: interleaved.
bench tree treesecret
bench one

if [[ -z ${BENCH_ONLY:-} || " $BENCH_ONLY " == *" treefloor "* ]]; then
  # Terraform's floor for the tree: one terraform_data holding the values the
  # tree's state holds (deploy_items, status, exports), taken from a fresh apply.
  "$tf" -chdir="$tmp/tree" apply -auto-approve -input=false -no-color >>"$tmp/tree.log" 2>&1 || fail "tree apply failed" "$tmp/tree.log"
  "$tf" -chdir="$tmp/tree" show -json |
    jq '.values.root_module.resources[0].values | {deploy_items, status, exports}' >"$tmp/treefloor-values.json"
  "$tf" -chdir="$tmp/tree" destroy -auto-approve -input=false -no-color >>"$tmp/tree.log" 2>&1 || fail "tree destroy failed" "$tmp/tree.log"
  # JSON is HCL; interpolation markers in strings are escaped.
  { printf 'resource "terraform_data" "floor" {\n  input = '; sed -e 's/\$[{]/$${/g' -e 's/%[{]/%%{/g' "$tmp/treefloor-values.json"; printf '}\n'; } >"$tmp/treefloor/main.tf"
  bench treefloor
fi

ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.1f", (b > 0 ? a / b : 0) }'; }
missed=0
goal() { # goal LABEL RATIO TARGET
  if awk -v r="$2" -v g="$3" 'BEGIN { exit !(r >= g) }'; then
    echo "PASS  $1: ${2}x >= ${3}x"
  else
    echo "FAIL  $1: ${2}x < ${3}x"
    missed=1
  fi
}
# within LABEL VALUE GOAL UNIT: VALUE must not exceed GOAL.
within() {
  if awk -v o="$2" -v g="$3" 'BEGIN { exit !(o <= g) }'; then
    echo "PASS  $1: $2$4 (goal <= $3$4)"
  else
    echo "FAIL  $1: $2$4 (goal <= $3$4)"
    missed=1
  fi
}

echo
if ran native && ran ours; then
  apply_ratio=$(ratio "$med_native_apply" "$med_ours_apply")
  plan_ratio=$(ratio "$med_native_plan" "$med_ours_plan")
  destroy_ratio=$(ratio "$med_native_destroy" "$med_ours_destroy")
  printf '%-14s %10s %10s %14s\n' "" native ours "native/ours"
  printf '%-14s %9.2fs %9.2fs %13sx\n' apply "$med_native_apply" "$med_ours_apply" "$apply_ratio"
  printf '%-14s %9.2fs %9.2fs %13sx\n' "no-op plan" "$med_native_plan" "$med_ours_plan" "$plan_ratio"
  printf '%-14s %9.2fs %9.2fs %13sx\n' destroy "$med_native_destroy" "$med_ours_destroy" "$destroy_ratio"
fi
if ran floor && ran ours; then
  floor_ratio=$(awk -v a="$med_ours_plan" -v b="$med_floor_plan" 'BEGIN { printf "%.2f", (b > 0 ? a / b : 0) }')
  printf '%-14s %9.2fs %9.2fs %13sx   (ours/floor, goal <= %s)\n' "plan vs floor" "$med_floor_plan" "$med_ours_plan" "$floor_ratio" "$floor_goal"
fi
if ran floor && ran inst; then
  inst_ratio=$(awk -v a="$med_inst_plan" -v b="$med_floor_plan" 'BEGIN { printf "%.2f", (b > 0 ? a / b : 0) }')
  printf '%-14s %9.2fs %9.2fs %13sx   (installation/floor; its apply %.2fs, destroy %.2fs)\n' "inst vs floor" "$med_floor_plan" "$med_inst_plan" "$inst_ratio" "$med_inst_apply" "$med_inst_destroy"
fi
if ran tree; then
  printf '%-14s apply %.2fs, no-op plan %.2fs, destroy %.2fs   (50 x 20 tree of sub-installations, goal: apply < 2s)\n' "1,000-item tree" "$med_tree_apply" "$med_tree_plan" "$med_tree_destroy"
fi
if ran tree && ran one && ran treefloor; then
  tree_over=$(awk -v a="$med_tree_plan" -v b="$med_one_plan" 'BEGIN { printf "%.2f", a - b }')
  floor_over=$(awk -v a="$med_treefloor_plan" -v b="$med_one_plan" 'BEGIN { printf "%.2f", a - b }')
  printf '%-14s 1-item execution %.2fs; tree %.2fs (+%ss, goal <= +%ss); Terraform floor for its values %.2fs (+%ss)\n' \
    "tree no-op" "$med_one_plan" "$med_tree_plan" "$tree_over" "$tree_goal" "$med_treefloor_plan" "$floor_over"
fi
if ran tree && ran treesecret; then
  secret_over=$(awk -v a="$med_treesecret_plan" -v b="$med_tree_plan" 'BEGIN { printf "%.2f", a - b }')
  secret_apply=$(awk -v a="$med_treesecret_apply" -v b="$med_tree_apply" 'BEGIN { printf "%.2f", (b > 0 ? a / b : 0) }')
  printf '%-14s apply %.2fs (%sx the tree'"'"'s, goal <= %sx), no-op plan %.2fs (%+.2fs against the tree, goal <= +%ss), destroy %.2fs   (tag in sensitive_imports)\n' \
    "secret tree" "$med_treesecret_apply" "$secret_apply" "$secret_apply_goal" "$med_treesecret_plan" "$secret_over" "$secret_goal" "$med_treesecret_destroy"
fi
echo

if ran native && ran ours; then
  goal "apply faster than native" "$apply_ratio" "$apply_goal"
  goal "no-op plan faster than native" "$plan_ratio" "$plan_goal"
fi
if ran floor && ran ours; then
  within "no-op plan against Terraform's floor" "$floor_ratio" "$floor_goal" x
fi
if ran tree && ran one && ran treefloor; then
  within "1,000-item tree no-op plan over a 1-item execution's" "$tree_over" "$tree_goal" s
fi
if ran tree && ran treesecret; then
  within "secret tree no-op plan over the tree's" "$secret_over" "$secret_goal" s
  within "secret tree apply against the tree's" "$secret_apply" "$secret_apply_goal" x
fi

if ((missed)) && [[ $strict == 1 ]]; then
  exit 1
fi
