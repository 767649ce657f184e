package provider

import (
	"bytes"
	"encoding/json"
	"regexp"
	"sort"
	"strings"

	"sigs.k8s.io/yaml"
)

// mask replaces a secret wherever one would be shown: logs, error
// messages and the rendered deploy items of a plan.
const mask = "***"

// secrets are the values known to be sensitive, as they would appear in
// text: string and number leaves of JSON values. Booleans and very short
// strings are left out: masking every "true" or "a" would hide the rest
// of the text, not a secret.
type secrets struct {
	list   []string
	sorted bool
}

// addJSON records the leaves of a JSON value.
func (s *secrets) addJSON(raw json.RawMessage) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if dec.Decode(&v) != nil {
		return
	}
	s.addValue(v)
}

// addValue records the leaves of a decoded JSON value.
func (s *secrets) addValue(v any) {
	switch x := v.(type) {
	case string:
		s.add(x)
	case json.Number:
		s.add(string(x))
	case []any:
		for _, e := range x {
			s.addValue(e)
		}
	case map[string]any:
		for _, e := range x {
			s.addValue(e)
		}
	}
}

func (s *secrets) add(x string) {
	if len(x) < 3 {
		return
	}
	s.list = append(s.list, x)
	s.sorted = false
	s.addEmbedded(x)
}

// secretKey matches the keys under which documents hold credentials:
// kubeconfig's token, client-key-data and client-certificate-data, a
// password, an auth header.
var secretKey = regexp.MustCompile(`(?i)token|password|passwd|secret|key|cert|auth|credential`)

// addEmbedded records the credentials of a YAML or JSON document held in
// a secret string, such as a target's kubeconfig: a template that parses
// the document and takes its token out must not show the token either.
// Only leaves under credential-like keys count, so that the document's
// kinds and names ("Config", a context's name) stay readable elsewhere.
func (s *secrets) addEmbedded(x string) {
	if !strings.Contains(x, "\n") && !strings.HasPrefix(strings.TrimSpace(x), "{") {
		return
	}
	var doc any
	if yaml.Unmarshal([]byte(x), &doc) != nil {
		return
	}
	var walk func(v any, secret bool)
	walk = func(v any, secret bool) {
		switch t := v.(type) {
		case map[string]any:
			for k, e := range t {
				walk(e, secret || secretKey.MatchString(k))
			}
		case []any:
			for _, e := range t {
				walk(e, secret)
			}
		case string:
			if secret && t != x {
				s.add(t)
			}
		}
	}
	walk(doc, false)
}

func (s *secrets) empty() bool { return len(s.list) == 0 }

// masked replaces every secret in text.
func (s *secrets) masked(text string) string {
	if !s.sorted {
		// Longest first, so a secret containing another is masked whole.
		sort.Slice(s.list, func(i, j int) bool { return len(s.list[i]) > len(s.list[j]) })
		s.sorted = true
	}
	for _, sec := range s.list {
		text = strings.ReplaceAll(text, sec, mask)
	}
	return text
}

// maskedJSON masks the secrets in the keys, strings and numbers of a JSON
// document. It returns raw itself when nothing was masked, so documents
// without secrets keep their exact text.
func (s *secrets) maskedJSON(raw json.RawMessage) json.RawMessage {
	if s.empty() {
		return raw
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if dec.Decode(&v) != nil {
		return raw
	}
	changed := false
	var walk func(any) any
	walk = func(v any) any {
		switch x := v.(type) {
		case string:
			if m := s.masked(x); m != x {
				changed = true
				return m
			}
		case json.Number:
			if s.masked(string(x)) != string(x) {
				changed = true
				return mask
			}
		case []any:
			for i, e := range x {
				x[i] = walk(e)
			}
		case map[string]any:
			out := make(map[string]any, len(x))
			for k, e := range x {
				mk := s.masked(k)
				changed = changed || mk != k
				out[mk] = walk(e)
			}
			return out
		}
		return v
	}
	v = walk(v)
	if !changed {
		return raw
	}
	out, err := json.Marshal(v)
	if err != nil {
		return json.RawMessage(`"` + mask + `"`)
	}
	return out
}
