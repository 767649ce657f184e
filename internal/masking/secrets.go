package masking

import (
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"

	"sigs.k8s.io/yaml"
)

// minSecret is the length (in characters) from which a text is masked
// wherever it appears: masking every "true" is fine, but masking every
// "a" or "1" would hide the rest of a message, not a secret.
const minSecret = 3

// Secrets are texts known to be secret, masked wherever they appear in
// text: logs, error messages, what a dry run says. It is safe for
// concurrent use.
type Secrets struct {
	mu     sync.Mutex
	list   []string
	seen   map[string]bool
	sorted bool
	// quotes are masked forms of texts too short to mask everywhere, as
	// they appear in one message: a secret's text with a little of its
	// context (see AddQuote).
	quotes [][2]string
}

// AddJSON records the string and number leaves of a JSON value.
func (s *Secrets) AddJSON(raw json.RawMessage) {
	if v, ok := decode(raw); ok {
		s.AddValue(v)
	}
}

// AddValue records the string and number leaves of a decoded JSON value,
// and the credentials of documents held in strings (see addEmbedded).
func (s *Secrets) AddValue(v any) {
	switch x := v.(type) {
	case string:
		s.Add(x)
	case json.Number:
		s.Add(string(x))
	case float64:
		s.Add(strconv.FormatFloat(x, 'f', -1, 64))
	case []any:
		for _, e := range x {
			s.AddValue(e)
		}
	case map[string]any:
		for _, e := range x {
			s.AddValue(e)
		}
	}
}

// Add records a secret text, the forms a command or template most often
// turns it into on its way to a log line (upper and lower case, base64,
// hex: a shell's tr, sprig's upper or b64enc), and the credentials of a
// document it holds. A form made by anything else is found by comparing
// renderings (Tree), which an apply aligned with its plan does not repeat.
func (s *Secrets) Add(x string) {
	if !s.AddText(x) {
		return
	}
	for _, form := range append([]string{strings.ToUpper(x), strings.ToLower(x),
		base64.StdEncoding.EncodeToString([]byte(x)), hex.EncodeToString([]byte(x))}, jsonForms(x)...) {
		s.AddText(form)
	}
	s.addEmbedded(x)
}

// jsonForms are x as a JSON string holds it, where that differs from x:
// escaped as encoding/json writes it (& < > as \u00XX, which is how an
// exec item's imports file and a rendered config hold them) and as other
// encoders do (those three as they are).
func jsonForms(x string) []string {
	var out []string
	for _, html := range []bool{true, false} {
		var b strings.Builder
		enc := json.NewEncoder(&b)
		enc.SetEscapeHTML(html)
		if enc.Encode(x) != nil {
			continue
		}
		q := strings.TrimSuffix(b.String(), "\n")
		if q = q[1 : len(q)-1]; q != x {
			out = append(out, q)
		}
	}
	return out
}

// AddText records x as it is, once; it reports whether x is new.
func (s *Secrets) AddText(x string) bool {
	if utf8.RuneCountInString(x) < minSecret {
		return false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.seen == nil {
		s.seen = map[string]bool{}
	}
	if s.seen[x] {
		return false
	}
	s.seen[x] = true
	s.list = append(s.list, x)
	s.sorted = false
	return true
}

// AddQuote records that wherever quote appears, masked is shown: a short
// secret (a digit, two letters) masked where a message quotes it, not
// everywhere.
func (s *Secrets) AddQuote(quote, masked string) {
	if quote == "" || quote == masked {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.quotes = append(s.quotes, [2]string{quote, masked})
}

// List are the secret texts recorded so far.
func (s *Secrets) List() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.list...)
}

// Empty reports whether nothing is recorded.
func (s *Secrets) Empty() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.list) == 0 && len(s.quotes) == 0
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
func (s *Secrets) addEmbedded(x string) {
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
				s.Add(t)
			}
		}
	}
	walk(doc, false)
}

// Text masks every secret in text.
func (s *Secrets) Text(text string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, q := range s.quotes {
		text = strings.ReplaceAll(text, q[0], q[1])
	}
	if !s.sorted {
		// Longest first, so a secret containing another is masked whole.
		sort.SliceStable(s.list, func(i, j int) bool { return len(s.list[i]) > len(s.list[j]) })
		s.sorted = true
	}
	for _, sec := range s.list {
		text = strings.ReplaceAll(text, sec, Mask)
	}
	return text
}

// JSON masks the secrets in the keys, strings and numbers of a JSON
// document. It returns raw itself when nothing was masked, so documents
// without secrets keep their exact text.
func (s *Secrets) JSON(raw json.RawMessage) json.RawMessage {
	if s.Empty() {
		return raw
	}
	v, ok := decode(raw)
	if !ok {
		return raw
	}
	changed := false
	var walk func(any) any
	walk = func(v any) any {
		switch x := v.(type) {
		case string:
			if m := s.Text(x); m != x {
				changed = true
				return m
			}
		case json.Number:
			if s.Text(string(x)) != string(x) {
				changed = true
				return Mask
			}
		case []any:
			for i, e := range x {
				x[i] = walk(e)
			}
		case map[string]any:
			out := make(map[string]any, len(x))
			for k, e := range x {
				mk := s.Text(k)
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
		return json.RawMessage(`"` + Mask + `"`)
	}
	return out
}

// Compared masks msg, a message of the real rendering (an error), where
// it differs from what the shadow renderings said in its place (shadows):
// that part was made of a secret, whatever a template did to it. The part
// joins the secret texts, and, with a little of the message around it,
// the quotes, so every message quoting it masks it too, however short it
// is. The rest is masked as Text masks it.
func (s *Secrets) Compared(msg string, shadows []string) string {
	start, end := -1, -1
	for _, sh := range shadows {
		from, to := differingRange(msg, sh)
		if from < 0 {
			continue
		}
		if start < 0 || from < start {
			start = from
		}
		end = max(end, to)
	}
	if start < 0 {
		return s.Text(msg)
	}
	s.AddText(msg[start:end])
	from, to := widen(msg, start, 12), widen(msg, end, -12)
	s.AddQuote(msg[from:to], msg[from:start]+Mask+msg[end:to])
	return s.Text(msg[:start]) + Mask + s.Text(msg[end:])
}

// widen moves a byte offset n characters on (back when n < 0) within s,
// no further than s's bounds.
func widen(s string, at, n int) int {
	for ; n > 0 && at > 0; n-- {
		at--
		for at > 0 && !utf8.RuneStart(s[at]) {
			at--
		}
	}
	for ; n < 0 && at < len(s); n++ {
		at++
		for at < len(s) && !utf8.RuneStart(s[at]) {
			at++
		}
	}
	return at
}
