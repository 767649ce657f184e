package moved

import (
	"encoding/json"
	"fmt"

	"sigs.k8s.io/yaml"

	"github.com/landscaper-tf/terraform-provider-landscaper/internal/deployer"
)

// kubernetesManifest converts kubernetes_manifest of hashicorp/kubernetes
// 2.x (schema version 1). manifest and object are dynamic attributes,
// which Terraform stores as {"value": ..., "type": ...}.
func kubernetesManifest(s *state) *Item {
	m := s.dynamicObject("manifest")
	obj := s.dynamicObject("object")
	s.refuseSet(map[string]string{
		"wait_for": "it waited for fields to match; the item's readiness checks compare exact values only, " +
			"so write them as readinessChecks.custom in the item's config (and remove wait_for before the move)",
	})
	var conds []condition
	for _, w := range s.objects("wait") {
		if !isDefault(w["fields"]) {
			s.refuse("wait.fields", "it waited for fields to match patterns; the item's readiness checks compare exact values only, "+
				"so write them as readinessChecks.custom in the item's config (and remove wait.fields before the move)")
		}
		conds = append(conds, s.conditions("wait.condition", w["condition"])...)
	}
	if m == nil {
		s.refuse("manifest", "the state holds no manifest object")
		return &Item{}
	}
	ns, _ := nested(obj, "metadata", "namespace").(string)
	return manifestItem(s, m, ns, false, true, conds)
}

// kubectlManifest converts kubectl_manifest of alekc/kubectl and
// gavinbunney/kubectl (schema version 1): one YAML document, applied with
// kubectl's machinery.
func kubectlManifest(s *state) *Item {
	s.refuseSet(map[string]string{
		"force_new": "changes deleted and re-created the object; Landscaper's manifest deployer updates objects in place. " +
			"Set force_new = false (and apply) before the move",
		"ignore_fields": "changes to these fields were ignored; the item's update writes every field of the manifest. " +
			"Remove them from yaml_body and ignore_fields (and apply) before the move",
	})
	var m map[string]any
	if err := yaml.Unmarshal([]byte(s.str("yaml_body")), &m); err != nil || m == nil {
		s.refuse("yaml_body", "not one YAML object: %v", err)
		return &Item{}
	}
	if ns := s.str("override_namespace"); ns != "" {
		setNested(m, ns, "metadata", "namespace")
	}
	var conds []condition
	for _, w := range s.objects("wait_for") {
		if !isDefault(w["field"]) {
			s.refuse("wait_for.field", "it waited for fields to match; write them as readinessChecks.custom in the item's config "+
				"(and remove wait_for.field before the move)")
		}
		conds = append(conds, s.conditions("wait_for.condition", w["condition"])...)
	}
	if !isDefault(s.attrs["sensitive_fields"]) {
		s.warn("sensitive_fields", "the manifest is carried into the item's config, which is not a sensitive attribute: "+
			"build the config from sensitive values (a sensitive variable) so plans do not show these fields")
	}
	return manifestItem(s, m, s.str("namespace"), s.boolean("apply_only", false), s.boolean("wait_for_rollout", true), conds)
}

// manifestItem is the kubernetes-manifest item of one object. ns is the
// namespace the object lives in (for a manifest that names none: the
// source provider's default); keep marks an object never to be deleted;
// rollout false turns the default readiness check off; conds are status
// conditions the object must have to be ready.
func manifestItem(s *state, m map[string]any, ns string, keep, rollout bool, conds []condition) *Item {
	if _, ok := nested(m, "metadata", "namespace").(string); !ok && ns != "" {
		setNested(m, ns, "metadata", "namespace")
	}
	ref := deployer.ObjectRef{}
	ref.APIVersion, _ = m["apiVersion"].(string)
	ref.Kind, _ = m["kind"].(string)
	ref.Name, _ = nested(m, "metadata", "name").(string)
	ref.Namespace, _ = nested(m, "metadata", "namespace").(string)
	if ref.APIVersion == "" || ref.Kind == "" || ref.Name == "" {
		s.refuse("manifest", "the object has no apiVersion, kind or metadata.name")
	}
	if ref.Kind == "Secret" {
		s.warn("manifest", "the Secret is carried into the item's config, which is not a sensitive attribute: "+
			"build the config from sensitive values (a sensitive variable) so plans do not show its data")
	}
	entry := map[string]any{"manifest": m}
	if keep {
		entry["policy"] = "keep"
	}
	cfg := map[string]any{"manifests": []any{entry}}
	rc := map[string]any{}
	if !rollout {
		rc["disableDefault"] = true
	}
	var checks []any
	for _, c := range conds {
		checks = append(checks, conditionCheck(m, c.Type, c.Status))
	}
	if len(checks) > 0 {
		rc["custom"] = checks
	}
	if len(rc) > 0 {
		cfg["readinessChecks"] = rc
	}
	return &Item{
		Execution: ref.Name,
		Name:      ItemManifest,
		Type:      "kubernetes-manifest",
		Config:    marshal(cfg),
		Adopt:     &deployer.Adoption{Source: s.typeName, Objects: []deployer.ObjectRef{ref}},
	}
}

// condition is a status condition a source provider waited for.
type condition struct {
	Type   string `json:"type"`
	Status string `json:"status"`
}

func (s *state) conditions(attr string, raw json.RawMessage) []condition {
	var out []condition
	if len(raw) > 0 {
		if err := json.Unmarshal(raw, &out); err != nil {
			s.refuse(attr, "not a list of conditions in the state")
		}
	}
	return out
}

// conditionCheck is a custom readiness check that the object m has a
// status condition of type typ with the status status, as the source
// provider's wait for a condition.
func conditionCheck(m map[string]any, typ, status string) map[string]any {
	sel := map[string]any{"apiVersion": m["apiVersion"], "kind": m["kind"], "name": nested(m, "metadata", "name")}
	if ns, ok := nested(m, "metadata", "namespace").(string); ok {
		sel["namespace"] = ns
	}
	return map[string]any{
		"name":             "condition-" + typ,
		"resourceSelector": []any{sel},
		"requirements": []any{map[string]any{
			"jsonPath": fmt.Sprintf(".status.conditions[?(@.type == %q)].status", typ),
			"operator": "==",
			"values":   []any{map[string]any{"value": status}},
		}},
	}
}

// dynamicObject reads a dynamic attribute holding an object, without
// null attributes (kubernetes_manifest leaves them out when it applies).
func (s *state) dynamicObject(name string) map[string]any {
	var dv struct {
		Value map[string]any `json:"value"`
	}
	if raw, ok := s.attrs[name]; ok {
		if err := json.Unmarshal(raw, &dv); err != nil {
			s.refuse(name, "not an object in the state")
		}
	}
	if dv.Value == nil {
		return nil
	}
	m, _ := withoutNulls(dv.Value).(map[string]any)
	return m
}

func withoutNulls(v any) any {
	switch t := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(t))
		for k, e := range t {
			if e != nil {
				out[k] = withoutNulls(e)
			}
		}
		return out
	case []any:
		out := make([]any, len(t))
		for i, e := range t {
			out[i] = withoutNulls(e)
		}
		return out
	}
	return v
}

func nested(m map[string]any, keys ...string) any {
	var v any = m
	for _, k := range keys {
		mm, ok := v.(map[string]any)
		if !ok {
			return nil
		}
		v = mm[k]
	}
	return v
}

func setNested(m map[string]any, value any, keys ...string) {
	for _, k := range keys[:len(keys)-1] {
		next, ok := m[k].(map[string]any)
		if !ok {
			next = map[string]any{}
			m[k] = next
		}
		m = next
	}
	m[keys[len(keys)-1]] = value
}
