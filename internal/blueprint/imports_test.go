package blueprint

import (
	"reflect"
	"strings"
	"testing"
)

const k8s = "landscaper.gardener.cloud/kubernetes-cluster"

func validImports() Imports {
	return Imports{
		Data: map[string]any{
			"replicas": 2,
			"endpoint": map[string]any{"host": "h", "port": 80},
			"release":  map[string]any{"name": "r"},
		},
		Targets:     map[string]Target{"cluster": {Type: k8s}},
		TargetLists: map[string][]Target{"clusters": {{Type: k8s}, {Type: k8s}}},
	}
}

type problem struct {
	Import  string
	Kind    ImportType
	Pointer string
	Reason  string
}

func TestValidateImports(t *testing.T) {
	b, err := LoadDir("testdata/blueprints/full")
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name     string
		mutate   func(in *Imports)
		want     []problem
		wantData map[string]any // checked when non-nil
	}{
		{name: "valid, default applied", mutate: func(*Imports) {},
			wantData: map[string]any{"replicas": 2, "endpoint": map[string]any{"host": "h", "port": 80}, "release": map[string]any{"name": "r"}, "namespace": "default"}},
		{name: "given value wins over default", mutate: func(in *Imports) { in.Data["namespace"] = "prod" }},
		{name: "required data missing", mutate: func(in *Imports) { delete(in.Data, "replicas") },
			want: []problem{{"replicas", ImportTypeData, "", ReasonMissing}}},
		{name: "required target missing", mutate: func(in *Imports) { delete(in.Targets, "cluster") },
			want: []problem{{"cluster", ImportTypeTarget, "", ReasonMissing}}},
		{name: "undeclared", mutate: func(in *Imports) { in.Data["replica"] = 1 },
			want: []problem{{"replica", ImportTypeData, "", ReasonUndeclared}}},
		{name: "data given as target", mutate: func(in *Imports) {
			delete(in.Data, "replicas")
			in.Targets["replicas"] = Target{Type: k8s}
		}, want: []problem{{"replicas", ImportTypeData, "", ReasonKindMismatch}}},
		{name: "target given as list", mutate: func(in *Imports) {
			delete(in.Targets, "cluster")
			in.TargetLists["cluster"] = []Target{{Type: k8s}}
		}, want: []problem{{"cluster", ImportTypeTarget, "", ReasonKindMismatch}}},
		{name: "wrong target type", mutate: func(in *Imports) { in.Targets["cluster"] = Target{Type: "landscaper.gardener.cloud/mock"} },
			want: []problem{{"cluster", ImportTypeTarget, "", ReasonTargetType}}},
		{name: "wrong type in list", mutate: func(in *Imports) { in.TargetLists["clusters"][1] = Target{Type: "x"} },
			want: []problem{{"clusters", ImportTypeTargetList, "/1", ReasonTargetType}}},
		{name: "wrong type in map", mutate: func(in *Imports) {
			in.TargetMaps = map[string]map[string]Target{"clusterMap": {"a/b": {Type: "x"}, "ok": {Type: k8s}}}
		}, want: []problem{{"clusterMap", ImportTypeTargetMap, "/a~1b", ReasonTargetType}}},
		{name: "schema violation names field", mutate: func(in *Imports) { in.Data["endpoint"] = map[string]any{"port": "80"} },
			want: []problem{{"endpoint", ImportTypeData, "", ReasonSchema}, {"endpoint", ImportTypeData, "/port", ReasonSchema}}},
		{name: "conditional satisfied", mutate: func(in *Imports) {
			in.Data["monitoring"] = true
			in.Data["monitoringConfig"] = map[string]any{"interval": "1m"}
		}},
		{name: "conditional required once parent given", mutate: func(in *Imports) { in.Data["monitoring"] = true },
			want: []problem{{"monitoringConfig", ImportTypeData, "", ReasonMissing}}},
		{name: "conditional without parent", mutate: func(in *Imports) { in.Data["monitoringConfig"] = map[string]any{"interval": "1m"} },
			want: []problem{{"monitoringConfig", ImportTypeData, "", ReasonConditional}}},
		{name: "conditional validated", mutate: func(in *Imports) {
			in.Data["monitoring"] = true
			in.Data["monitoringConfig"] = map[string]any{}
		}, want: []problem{{"monitoringConfig", ImportTypeData, "", ReasonSchema}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := validImports()
			tt.mutate(&in)
			data, problems := b.ValidateImports(nil, in)
			got := make([]problem, 0, len(problems))
			for _, p := range problems {
				got = append(got, problem{p.Import, p.Kind, p.Pointer, p.Reason})
				if p.Message == "" || !strings.Contains(p.Error(), p.Import) {
					t.Errorf("problem without message or name: %+v", p)
				}
			}
			if len(got) == 0 {
				got = nil
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("problems = %+v\nwant %+v\n(%v)", got, tt.want, ImportProblems(problems))
			}
			if tt.wantData != nil && !reflect.DeepEqual(data, tt.wantData) {
				t.Errorf("data = %v, want %v", data, tt.wantData)
			}
		})
	}
}

func TestValidateImportsUndeclaredListsDeclared(t *testing.T) {
	b, err := LoadDir("testdata/blueprints/guided-root")
	if err != nil {
		t.Fatal(err)
	}
	_, problems := b.ValidateImports(nil, Imports{
		Data:    map[string]any{"configmap-name-base": "x", "extra": 1},
		Targets: map[string]Target{"cluster": {Type: k8s}},
	})
	if len(problems) != 1 || !strings.Contains(problems[0].Message, "declared: cluster, configmap-name-base") {
		t.Fatalf("problems = %v", ImportProblems(problems))
	}
}
