package e2e

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/landscaper-tf/terraform-provider-landscaper/internal/acctest"
)

// exampleCheck says how far an example configuration of examples/ runs
// here, offline and without a cluster: plan where nothing it plans needs
// more than its files, validate where it needs a cluster, a registry or
// files it only describes.
type exampleCheck struct {
	// plan runs `terraform plan` after validate, with these variables
	// (KEY=VALUE environment entries; KUBECONFIG_FILE in a value is the
	// path of a kubeconfig of a cluster nobody serves).
	plan bool
	vars []string
	// nothing: the example only configures the provider; its plan is empty.
	nothing bool
	// within copies examples/<within> and runs in the example's file put
	// where its instructions say (at), for an example written to live
	// inside another one.
	within, at string
	// module: a module another example uses, whose instructions are that
	// example's.
	module bool
}

// exampleChecks holds every directory of examples/ with a configuration;
// a new one must be added, so that it is checked too.
var exampleChecks = map[string]exampleCheck{
	"quickstart":                        {plan: true},
	"installation":                      {plan: true},
	"installation/render":               {plan: true, within: "installation", at: "render", module: true},
	"kubernetes":                        {},
	"fleet":                             {plan: true, vars: []string{`TF_VAR_clusters={"eu-1" = "KUBECONFIG_FILE", "us-1" = "KUBECONFIG_FILE"}`}},
	"fleet/installation":                {plan: true, vars: []string{`TF_VAR_clusters={"eu-1" = "KUBECONFIG_FILE", "us-1" = "KUBECONFIG_FILE"}`}},
	"registry":                          {},
	"provider":                          {plan: true, nothing: true},
	"resources/landscaper_execution":    {plan: true},
	"resources/landscaper_installation": {},
	"data-sources/landscaper_blueprint": {plan: true, within: "installation", at: "preview"},
}

// exampleDirs lists the directories below examples/ that hold .tf files.
func exampleDirs(t *testing.T) []string {
	t.Helper()
	root := filepath.Join(repoRoot, "examples")
	var dirs []string
	err := filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(p, ".tf") {
			return err
		}
		rel, _ := filepath.Rel(root, filepath.Dir(p))
		if !slices.Contains(dirs, rel) {
			dirs = append(dirs, filepath.ToSlash(rel))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return dirs
}

// Every example configuration in examples/ passes `terraform validate`
// as it is written (for the data source's example: where its comment
// says to save it), and those that need no cluster or registry plan too.
// Each says how to run it: after `make install-mirror`, which puts the
// provider where plain `terraform init` finds it.
// The provider comes through dev_overrides: no registry, no network.
func TestExamplesValidateAndPlan(t *testing.T) {
	t.Parallel()
	for _, dir := range exampleDirs(t) {
		check, ok := exampleChecks[dir]
		if !ok {
			t.Errorf("examples/%s is not in exampleChecks: say how far it runs offline", dir)
			continue
		}
		t.Run(dir, func(t *testing.T) {
			t.Parallel()
			if !check.module {
				files, _ := filepath.Glob(filepath.Join(repoRoot, "examples", dir, "*.tf"))
				if !slices.ContainsFunc(files, func(f string) bool {
					return strings.Contains(acctest.ReadFile(t, f), "`make install-mirror`")
				}) {
					t.Errorf("examples/%s does not say to run `make install-mirror` first", dir)
				}
			}
			w := newWorkspace(t)
			chdir := "."
			if check.within != "" {
				copyTree(t, filepath.Join(repoRoot, "examples", check.within), w.Dir)
				chdir = check.at
			}
			copyTree(t, filepath.Join(repoRoot, "examples", dir), filepath.Join(w.Dir, chdir))
			at := "-chdir=" + chdir
			// The local modules (examples/installation's tests use ./render)
			// are installed as `terraform init` would; the provider needs
			// nothing.
			if out, code := w.Run(nil, at, "get", "-no-color"); code != 0 {
				t.Fatalf("terraform get exit %d:\n%s", code, out)
			}
			if out, code := w.Run(nil, at, "validate", "-no-color"); code != 0 || !strings.Contains(out, "The configuration is valid") {
				t.Fatalf("terraform validate exit %d:\n%s", code, out)
			}
			if !check.plan {
				return
			}
			kubeconfig := w.Path("unreachable.kubeconfig")
			acctest.WriteFile(t, kubeconfig, acctest.UnreachableKubeconfig)
			var vars []string
			for _, v := range check.vars {
				vars = append(vars, strings.ReplaceAll(v, "KUBECONFIG_FILE", kubeconfig))
			}
			want := 2
			if check.nothing {
				want = 0
			}
			if out, code := w.Run(vars, at, "plan", "-input=false", "-no-color", "-detailed-exitcode"); code != want {
				t.Fatalf("terraform plan exit %d, want %d (0: no changes, 2: changes):\n%s", code, want, out)
			}
		})
	}
}

// docBlock is one ```terraform (or hcl) code block of a page of docs/ or
// of the README.
type docBlock struct {
	page, text string
}

var docBlockRE = regexp.MustCompile("(?s)```(?:terraform|hcl)\n(.*?)```")

func docBlocks(t *testing.T) []docBlock {
	t.Helper()
	pages, err := filepath.Glob(filepath.Join(repoRoot, "docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	more, _ := filepath.Glob(filepath.Join(repoRoot, "docs", "*", "*.md"))
	// The README is the first page most people read.
	more = append(more, filepath.Join(repoRoot, "README.md"))
	var blocks []docBlock
	for _, page := range append(pages, more...) {
		rel, _ := filepath.Rel(repoRoot, page)
		for _, m := range docBlockRE.FindAllStringSubmatch(acctest.ReadFile(t, page), -1) {
			blocks = append(blocks, docBlock{page: filepath.ToSlash(rel), text: m[1]})
		}
	}
	return blocks
}

// elided are the errors a fragment of a guide has because of what it
// leaves out ("# ..."): required arguments, the variables, resources and
// modules of the rest of the configuration, files next to it. Any other error,
// such as an attribute the schema lacks or a value of the wrong type, is
// a mistake in the documentation.
var elided = []string{
	"Missing required argument",
	"Reference to undeclared input variable",
	"Reference to undeclared resource",
	"Reference to undeclared module",
	"Module not installed", // source = "./modules/cluster": the reader's own
	"Configuration for import target does not exist",
	"Invalid function argument", // file("acme.pub"): the key is the reader's
}

// bareAttributeRE matches a fragment whose first statement is an
// attribute, not a block.
var bareAttributeRE = regexp.MustCompile(`^(?:\s*#.*\n|\s*\n)*\s*[A-Za-z_][\w-]*\s*=`)

// identityImportRE matches a fragment that imports by identity, which
// Terraform 1.12 brought: it validates with Terraform 1.15.
var identityImportRE = regexp.MustCompile(`(?m)^\s*identity\s*=`)

// listBlockRE matches a fragment of a query file (.tfquery.hcl), whose
// list blocks Terraform 1.14 brought: it validates with Terraform 1.15,
// as a query file.
var listBlockRE = regexp.MustCompile(`(?m)^\s*list\s+"`)

// fragmentErrors validates a fragment of configuration against the
// provider's schema and returns its errors but those of what it elides.
func fragmentErrors(t *testing.T, config string) []string {
	t.Helper()
	w := newWorkspace(t)
	if identityImportRE.MatchString(config) {
		w.Terraform = terraform115(t)
	}
	args := []string{"validate", "-json", "-no-color"}
	if listBlockRE.MatchString(config) {
		w.Terraform = terraform115(t)
		acctest.WriteFile(t, w.Path("fragment.tfquery.hcl"), config)
		config, args = "", append(args, "-query")
	}
	w.Config(config)
	out, _ := w.Run(nil, args...)
	var res struct {
		Diagnostics []struct {
			Severity, Summary, Detail string
		} `json:"diagnostics"`
	}
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatalf("terraform validate -json: %v\n%s", err, out)
	}
	var errs []string
	for _, d := range res.Diagnostics {
		if d.Severity == "error" && !slices.Contains(elided, d.Summary) {
			errs = append(errs, d.Summary+": "+d.Detail)
		}
	}
	return errs
}

// Every terraform code block of docs/ is either an example of examples/
// (checked whole by TestExamplesValidateAndPlan) or a fragment, and every
// fragment validates against the provider's schema but for what it elides.
func TestDocsCodeBlocksValidate(t *testing.T) {
	t.Parallel()
	examples := map[string]string{}
	for _, dir := range exampleDirs(t) {
		files, _ := filepath.Glob(filepath.Join(repoRoot, "examples", dir, "*.tf"))
		for _, f := range files {
			examples[strings.TrimSpace(acctest.ReadFile(t, f))] = f
		}
	}
	blocks := docBlocks(t)
	if len(blocks) < 10 {
		t.Fatalf("found only %d terraform code blocks in docs/", len(blocks))
	}
	fragments := 0
	for i, b := range blocks {
		if _, ok := examples[strings.TrimSpace(b.text)]; ok {
			continue
		}
		fragments++
		t.Run(fmt.Sprintf("%s#%d", b.page, i), func(t *testing.T) {
			t.Parallel()
			// A bare attribute line belongs in a resource of one of the
			// provider's types; any of them will do.
			wrappers := []string{"%s"}
			if bareAttributeRE.MatchString(b.text) {
				wrappers = []string{"resource \"landscaper_installation\" \"fragment\" {\n%s}\n", "resource \"landscaper_execution\" \"fragment\" {\n%s}\n"}
			}
			var errs []string
			for _, wrapper := range wrappers {
				if errs = fragmentErrors(t, fmt.Sprintf(wrapper, b.text)); len(errs) == 0 {
					return
				}
			}
			t.Errorf("%s:\n%s\nin:\n%s", b.page, strings.Join(errs, "\n"), b.text)
		})
	}
	if fragments == 0 {
		t.Error("no fragment found in docs/: the example matching is wrong")
	}
}
