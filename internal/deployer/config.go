package deployer

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	"sigs.k8s.io/yaml"
)

// NormalizeConfig turns a user's config text (JSON or YAML) into JSON.
// Empty text means an empty object, so simple items need no config at all.
func NormalizeConfig(text string) (json.RawMessage, error) {
	if strings.TrimSpace(text) == "" {
		return json.RawMessage("{}"), nil
	}
	out, err := yaml.YAMLToJSON([]byte(text))
	if err != nil {
		return nil, fmt.Errorf("config is neither JSON nor YAML: %w", err)
	}
	if !bytes.HasPrefix(bytes.TrimSpace(out), []byte("{")) {
		return nil, fmt.Errorf("config must be an object, got %s", firstLine(string(out)))
	}
	return out, nil
}

// DecodeStrict decodes normalised config into v and rejects unknown fields,
// so a typo in a field name is a plan-time error instead of a silent default.
func DecodeStrict(config json.RawMessage, v any) error {
	dec := json.NewDecoder(bytes.NewReader(config))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return fmt.Errorf("invalid config: %s", strings.TrimPrefix(err.Error(), "json: "))
	}
	return nil
}

func firstLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i] + "..."
	}
	if len(s) > 60 {
		s = s[:60] + "..."
	}
	return s
}
