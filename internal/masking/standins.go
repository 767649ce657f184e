package masking

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/json"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"sigs.k8s.io/yaml"
)

// Mask is shown instead of a value a secret influenced.
const Mask = "***"

// Rounds plans the shadow renderings of one tree: how many, and what each
// round puts in place of every secret. Round 0 changes every secret: every
// letter and digit of a string moves on within its class (the whole string
// when it has none), every digit of a number, every boolean flips. That
// alone changes what a string or a number's digits feed, but a branch on
// two booleans (a && b) or a comparison of a number may come out the same
// for the stand-ins, so secrets holding booleans or numbers get more
// rounds: each of the first booleans flipped alone; numbers smaller in
// magnitude, larger in magnitude and of the other sign, so that a
// threshold anywhere lies between the secret and one of its stand-ins
// (digits drawn from a seed of the secrets, so a plan and its apply draw
// the same). A leaf that differs from the real rendering in any round was
// influenced by a secret.
type Rounds struct {
	n    int
	seed [32]byte
	// flip names the round (from 1) that flips a boolean leaf alone, by
	// the leaf's path.
	flip map[string]int
}

// maxRounds bounds the shadow renderings of a tree: every round renders
// the whole tree once more.
const maxRounds = 4

// NewRounds plans the rounds for the secrets of a tree, by a path that
// names each (an import, a target).
func NewRounds(secrets map[string]any) *Rounds {
	r := &Rounds{n: 1, flip: map[string]int{}}
	var bools []string
	numbers := false
	var walk func(path string, v any)
	walk = func(path string, v any) {
		switch x := v.(type) {
		case bool:
			bools = append(bools, path)
		case json.Number, float64, int, int64:
			numbers = true
		case []any:
			for i, e := range x {
				walk(path+"/"+strconv.Itoa(i), e)
			}
		case map[string]any:
			for k, e := range x {
				walk(path+"/"+k, e)
			}
		}
	}
	for p, v := range secrets {
		walk(p, v)
	}
	slices.Sort(bools)
	extra := 0
	if len(bools) > 1 {
		// One boolean is exhausted by round 0: it has one other value.
		extra = len(bools)
	}
	if numbers {
		extra = max(extra, 3)
	}
	r.n += min(extra, maxRounds-1)
	if r.n > 1 {
		for i, p := range bools {
			r.flip[p] = 1 + i%(r.n-1)
		}
	}
	h := sha256.New()
	h.Write([]byte("landscaper-masking-rounds\x00"))
	for _, p := range slices.Sorted(maps.Keys(secrets)) {
		b, _ := json.Marshal(secrets[p])
		h.Write([]byte(p + "\x00"))
		h.Write(b)
	}
	copy(r.seed[:], h.Sum(nil))
	return r
}

// Count is the number of shadow renderings.
func (r *Rounds) Count() int { return r.n }

// Standins makes the stand-ins of round i.
func (r *Rounds) Standins(i int) *Standins { return &Standins{r: r, round: i} }

// Standins replaces secrets by the stand-ins of one round and remembers
// the strings it made, so that a shadow rendering can be masked the way
// the real one is.
type Standins struct {
	r     *Rounds
	round int
	list  []string
}

// Strings are the stand-in texts made so far.
func (s *Standins) Strings() []string { return s.list }

// Of returns v with every leaf replaced by its stand-in (see Rounds). A
// string holding a YAML or JSON document (a kubeconfig) keeps its keys,
// so that a template parsing it finds the same structure. The result
// depends on v, the round and the tree's secrets alone, so that plan and
// apply agree.
func (s *Standins) Of(v any) any { return s.At("", v) }

// At is Of for the value at path: the path picks the random draws and the
// flips of the rounds after the first.
func (s *Standins) At(path string, v any) any {
	switch x := v.(type) {
	case string:
		return s.str(path, x)
	case bool:
		if s.round == 0 || s.rounds().flip[path] == s.round {
			return !x
		}
		return x
	case json.Number:
		out := s.number(path, string(x))
		s.list = append(s.list, out)
		return json.Number(out)
	case float64:
		f, err := strconv.ParseFloat(s.number(path, strconv.FormatFloat(x, 'f', -1, 64)), 64)
		if err != nil {
			return x + 1
		}
		s.list = append(s.list, strconv.FormatFloat(f, 'f', -1, 64))
		return f
	case int:
		return int(s.integer(path, int64(x)))
	case int64:
		return s.integer(path, x)
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = s.At(path+"/"+strconv.Itoa(i), e)
		}
		return out
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[k] = s.At(path+"/"+k, e)
		}
		return out
	}
	return v
}

// JSON returns a JSON document with its leaves replaced as At does; a
// document that does not parse is returned as it is.
func (s *Standins) JSON(path string, raw json.RawMessage) json.RawMessage {
	v, ok := decode(raw)
	if !ok {
		return raw
	}
	out, err := json.Marshal(s.At(path, v))
	if err != nil {
		return raw
	}
	return out
}

func (s *Standins) rounds() *Rounds {
	if s.r == nil {
		s.r = &Rounds{n: 1}
	}
	return s.r
}

func (s *Standins) str(path, x string) string {
	if doc, ok := s.document(path, x); ok {
		return doc
	}
	r := Rotated(x, s.round+1)
	if r != x {
		s.list = append(s.list, r)
	}
	return r
}

// document replaces the leaves of a YAML or JSON document held in a
// string, keeping its format.
func (s *Standins) document(path, x string) (string, bool) {
	trimmed := strings.TrimSpace(x)
	isJSON := strings.HasPrefix(trimmed, "{") || strings.HasPrefix(trimmed, "[")
	if !isJSON && !strings.Contains(x, "\n") {
		return "", false
	}
	var doc any
	if isJSON {
		v, ok := decode([]byte(x))
		if !ok {
			return "", false
		}
		doc = v
	} else if yaml.Unmarshal([]byte(x), &doc) != nil {
		return "", false
	}
	switch doc.(type) {
	case map[string]any, []any:
	default:
		return "", false
	}
	var out []byte
	var err error
	if isJSON {
		out, err = json.Marshal(s.At(path+"/~doc", doc))
	} else {
		out, err = yaml.Marshal(s.At(path+"/~doc", doc))
	}
	if err != nil || string(out) == x {
		return "", false
	}
	s.list = append(s.list, string(out))
	return string(out), true
}

// draw is a number from the round's seed for the leaf at path.
func (s *Standins) draw(path string) uint64 {
	r := s.rounds()
	h := sha256.New()
	h.Write(r.seed[:])
	h.Write([]byte(strconv.Itoa(s.round) + "\x00" + path))
	return binary.BigEndian.Uint64(h.Sum(nil))
}

// number is the stand-in of a number written as text: its digits moved on
// in round 0 (so every digit, and so every prefix and suffix, differs);
// then, with digits drawn at random, one of fewer integer digits (round
// 1), one of more (round 2), and the first with the other sign (round 3).
// A threshold between zero and the secret, or between the secret and the
// next power of ten above it, lies between the secret and one of them, so
// a comparison with it comes out otherwise for that stand-in; one further
// off (ten times the secret, or past zero) may not.
func (s *Standins) number(path, n string) string {
	neg := strings.HasPrefix(n, "-")
	switch s.round {
	case 0:
		return rotatedNumber(n)
	case 3:
		if neg {
			return strings.TrimPrefix(rotatedNumber(n), "-")
		}
		return "-" + rotatedNumber(n)
	}
	digits := strings.TrimLeft(strings.SplitN(strings.TrimPrefix(n, "-"), ".", 2)[0], "0")
	u := s.draw(path)
	var v uint64
	if s.round == 1 {
		// Below 10^(digits-1): the secret has at least that many.
		v = (u >> 8) % uint64(math.Pow10(min(max(len(digits)-1, 0), 18)))
	} else {
		// At least 10^digits, below 10^(digits+1).
		lo := uint64(math.Pow10(min(len(digits), 17)))
		v = lo + (u>>8)%(9*lo)
	}
	out := strconv.FormatUint(v, 10)
	if strings.ContainsAny(n, ".eE") {
		out += "." + strconv.FormatUint((u>>40)%1000+1, 10)
	}
	if neg {
		out = "-" + out
	}
	if out == n {
		return rotatedNumber(n)
	}
	return out
}

func (s *Standins) integer(path string, n int64) int64 {
	v, err := strconv.ParseInt(s.number(path, strconv.FormatInt(n, 10)), 10, 64)
	if err != nil {
		return n + 1
	}
	return v
}

// rotatedNumber moves every digit of a number's mantissa one place on: the
// leading digit within 1-9, so the number keeps its magnitude.
func rotatedNumber(n string) string {
	b := []byte(n)
	lead := true
	for i, c := range b {
		switch {
		case c == 'e' || c == 'E':
			return string(b)
		case c >= '0' && c <= '9':
			switch {
			case lead && c != '0':
				b[i] = '1' + byte((int(c-'1')+1)%9)
			default:
				b[i] = '0' + byte((int(c-'0')+1)%10)
			}
			lead = false
		}
	}
	return string(b)
}

// punctuation are the characters a string without letters or digits
// rotates among: none of them quotes, escapes or opens a YAML flow, so a
// stand-in renders wherever the secret did.
const punctuation = ".-_+=~^$()/;,"

// Rotated moves every letter and digit of x k places on within its class
// (ASCII or not, the case kept); a string with neither has its other
// characters moved instead. Every character that moves differs, so every
// part of the stand-in that holds one differs from the secret's, while the
// shape (length, punctuation, spaces) that a schema pattern checks stays.
// A non-empty x never comes back unchanged.
func Rotated(x string, k int) string {
	alnum := strings.IndexFunc(x, func(r rune) bool { return unicode.IsLetter(r) || unicode.IsDigit(r) }) >= 0
	var b strings.Builder
	b.Grow(len(x))
	for _, r := range x {
		switch {
		case r >= 'a' && r <= 'z':
			r = 'a' + (r-'a'+rune(k))%26
		case r >= 'A' && r <= 'Z':
			r = 'A' + (r-'A'+rune(k))%26
		case r >= '0' && r <= '9':
			r = '0' + (r-'0'+rune(k))%10
		case unicode.IsLetter(r), unicode.IsDigit(r):
			r = nextOfClass(r, k)
		case alnum || unicode.IsSpace(r) || unicode.IsControl(r):
		case r < utf8.RuneSelf:
			if i := strings.IndexRune(punctuation, r); i >= 0 {
				r = rune(punctuation[(i+k)%len(punctuation)])
			} else {
				r = rune(punctuation[k%len(punctuation)])
			}
		default:
			r = nextOfClass(r, k)
		}
		b.WriteRune(r)
	}
	out := b.String()
	if out == x && x != "" {
		// Only spaces and control characters: not a likely secret, but
		// a stand-in equal to the secret would mask nothing.
		_, size := utf8.DecodeRuneInString(x)
		out = "." + x[size:]
	}
	return out
}

// nextOfClass is the k-th rune after r of r's class (a letter of the same
// case, a digit, a symbol or punctuation), or an ASCII one of that class.
func nextOfClass(r rune, k int) rune {
	same := func(c rune) bool {
		switch {
		case unicode.IsLetter(r):
			return unicode.IsLetter(c) && unicode.IsUpper(c) == unicode.IsUpper(r) && unicode.IsLower(c) == unicode.IsLower(r)
		case unicode.IsDigit(r):
			return unicode.IsDigit(c)
		default:
			return (unicode.IsPunct(c) || unicode.IsSymbol(c)) && c >= utf8.RuneSelf
		}
	}
	c, found := r, 0
	for step := 0; step < 512 && found < k; step++ {
		c++
		if c > unicode.MaxRune {
			c = utf8.RuneSelf
		}
		if c != r && utf8.ValidRune(c) && same(c) {
			found++
		}
	}
	if found == k && c != r {
		return c
	}
	switch {
	case unicode.IsUpper(r):
		return 'X'
	case unicode.IsLetter(r):
		return 'x'
	case unicode.IsDigit(r):
		return '7'
	}
	return '~'
}

func decode(raw []byte) (any, bool) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if dec.Decode(&v) != nil {
		return nil, false
	}
	return v, true
}

// Decode reads a JSON document with numbers kept as written.
func Decode(raw []byte) (any, bool) { return decode(raw) }
