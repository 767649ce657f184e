package masking

import (
	"bytes"
	"encoding/json"
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
// for the stand-ins, so secrets holding booleans or numbers (also inside a
// JSON or YAML document held in a string, and strings that are numbers)
// get more rounds, in which each moves alone: three for numbers, smaller
// in magnitude, larger in magnitude and of the other sign, so that a
// threshold near the secret lies between it and one of its stand-ins
// (booleans keep their values there); then one round per boolean, up to
// maxBooleanRounds, flipping it alone (numbers keep theirs). Strings
// change in every round. A leaf that differs from the real rendering in
// any round was influenced by a secret.
type Rounds struct {
	n int
	// numbers is whether rounds 1 to 3 are the numbers' rounds.
	numbers bool
	// flip names the round that flips a boolean leaf alone, by the
	// leaf's path.
	flip map[string]int
}

// maxBooleanRounds bounds the rounds of booleans: every round renders the
// whole tree once more. Booleans past it share rounds.
const maxBooleanRounds = 4

// numberRounds are the rounds in which numbers move alone.
const numberRounds = 3

// maxRounds bounds the shadow renderings of a tree: round 0, the numbers'
// and the booleans'. Strings rotate by round+1 places, which must stay
// below the size of the smallest class they rotate in (ten digits).
const maxRounds = 1 + numberRounds + maxBooleanRounds

// NewRounds plans the rounds for the secrets of a tree, by a path that
// names each (an import, a target).
func NewRounds(secrets map[string]any) *Rounds {
	r := &Rounds{n: 1, flip: map[string]int{}}
	var bools []string
	var walk func(path string, v any)
	walk = func(path string, v any) {
		switch x := v.(type) {
		case bool:
			bools = append(bools, path)
		case json.Number, float64, int, int64:
			r.numbers = true
		case string:
			if doc, _, ok := parseDocument(x); ok {
				walk(path+"/~doc", doc)
			} else if numeric(x) {
				r.numbers = true
			}
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
	if r.numbers {
		r.n += numberRounds
	}
	if len(bools) > 1 {
		// One boolean alone is exhausted by round 0: it has one other
		// value.
		slices.Sort(bools)
		first := r.n
		rounds := min(len(bools), maxBooleanRounds)
		for i, p := range bools {
			r.flip[p] = first + i%rounds
		}
		r.n += rounds
	}
	return r
}

// Count is the number of shadow renderings.
func (r *Rounds) Count() int { return r.n }

// numberRound reports whether round i is one in which numbers move
// alone, and which (1 smaller, 2 larger, 3 the other sign).
func (r *Rounds) numberRound(i int) (int, bool) {
	if !r.numbers || i < 1 || i > numberRounds {
		return 0, false
	}
	return i, true
}

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
		out := s.number(string(x))
		s.list = append(s.list, out)
		return json.Number(out)
	case float64:
		f, err := strconv.ParseFloat(s.number(strconv.FormatFloat(x, 'f', -1, 64)), 64)
		if err != nil {
			return x + 1
		}
		s.list = append(s.list, strconv.FormatFloat(f, 'f', -1, 64))
		return f
	case int:
		return int(s.integer(int64(x)))
	case int64:
		return s.integer(x)
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
	if x == "" {
		// The empty string is its own rotation: what a template decides
		// from a secret being empty (if, default) would show it.
		return emptyStandin
	}
	if doc, ok := s.document(path, x); ok {
		return doc
	}
	if round, moves := s.rounds().numberRound(s.round); moves && numeric(x) {
		// A number written as text (a port for an env value, a PIN) is
		// compared as one once converted, and checked as text (a
		// pattern of four digits): digits alone keep their count, the
		// smallest and the largest of it.
		out := ""
		switch {
		case strings.Trim(x, "0123456789") != "":
			out = s.number(x)
		case round == 1:
			out = strings.Repeat("0", len(x))
		case round == 2:
			out = strings.Repeat("9", len(x))
		}
		if out != "" && out != x {
			s.list = append(s.list, out)
			return out
		}
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
	doc, isJSON, ok := parseDocument(x)
	if !ok {
		return "", false
	}
	var out []byte
	var err error
	if isJSON {
		out, err = json.Marshal(s.At(path+"/~doc", doc))
	} else {
		out, err = yaml.Marshal(s.At(path+"/~doc", doc))
	}
	if err != nil {
		return "", false
	}
	if string(out) == x {
		// Nothing of it moves this round (a document of numbers in a
		// boolean's round): it stays as it is, keys and all.
		return x, true
	}
	s.list = append(s.list, string(out))
	return string(out), true
}

// parseDocument parses a string that holds a JSON or YAML document (an
// object or a list): JSON when it starts as one, YAML when it spans lines.
func parseDocument(x string) (doc any, isJSON, ok bool) {
	trimmed := strings.TrimSpace(x)
	isJSON = strings.HasPrefix(trimmed, "{") || strings.HasPrefix(trimmed, "[")
	if !isJSON && !strings.Contains(x, "\n") {
		return nil, false, false
	}
	if isJSON {
		v, ok := decode([]byte(x))
		if !ok {
			return nil, false, false
		}
		doc = v
	} else if yaml.Unmarshal([]byte(x), &doc) != nil {
		return nil, false, false
	}
	switch doc.(type) {
	case map[string]any, []any:
		return doc, isJSON, true
	}
	return nil, false, false
}

// numeric reports whether a string is a decimal number as a person writes
// one ("8443", "-1.5"): such a string is compared as a number once
// converted (atoi, float64).
func numeric(x string) bool {
	if x == "" || len(x) > 40 {
		return false
	}
	digits := 0
	for i, c := range x {
		switch {
		case c >= '0' && c <= '9':
			digits++
		case c == '-' && i == 0, c == '.':
		default:
			return false
		}
	}
	_, err := strconv.ParseFloat(x, 64)
	return digits > 0 && err == nil
}

// number is the stand-in of a number written as text: its digits moved on
// in round 0 (so every digit, and so every prefix and suffix, differs);
// in the numbers' rounds a tenth of it (fewer integer digits, round 1),
// the next power of ten (round 2) and the first with the other sign
// (round 3); as it is in the booleans' rounds. A threshold between zero
// and the secret, or between the secret and the next power of ten above
// it, lies between the secret and one of them, so a comparison with it
// comes out otherwise for that stand-in; one further off (ten times the
// secret, or past zero) may not. None is more than ten times the secret's
// magnitude (a loop up to it costs at most ten times as much).
func (s *Standins) number(n string) string {
	round, moves := s.rounds().numberRound(s.round)
	switch {
	case s.round == 0:
		return rotatedNumber(n)
	case !moves:
		return n
	case round == 3:
		if strings.HasPrefix(n, "-") {
			return strings.TrimPrefix(rotatedNumber(n), "-")
		}
		return "-" + rotatedNumber(n)
	}
	f, err := strconv.ParseFloat(n, 64)
	if err != nil || math.IsInf(f, 0) || math.IsNaN(f) {
		return rotatedNumber(n)
	}
	a := math.Abs(f)
	var v float64
	if round == 1 {
		v = math.Trunc(a / 10)
	} else {
		digits := 0.0
		if a >= 1 {
			digits = math.Floor(math.Log10(a)) + 1
		}
		v = math.Pow(10, digits)
		if v <= a { // Log10 rounded down at a power of ten
			v *= 10
		}
	}
	format := byte('f')
	if strings.ContainsAny(n, "eE") {
		format = 'e'
	}
	out := strconv.FormatFloat(math.Copysign(v, f), format, -1, 64)
	if out == n || v == a {
		return rotatedNumber(n)
	}
	return out
}

func (s *Standins) integer(n int64) int64 {
	v, err := strconv.ParseInt(s.number(strconv.FormatInt(n, 10)), 10, 64)
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

// emptyStandin stands for an empty string: one character no template
// quotes or escapes, too short to be masked as a text (minSecret).
const emptyStandin = "."

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
		// Hex letters stay hex letters, so that a pattern a token or a
		// digest must match accepts the stand-in.
		case r >= 'a' && r <= 'f':
			r = 'a' + (r-'a'+step(k, 6))%6
		case r >= 'g' && r <= 'z':
			r = 'g' + (r-'g'+step(k, 20))%20
		case r >= 'A' && r <= 'F':
			r = 'A' + (r-'A'+step(k, 6))%6
		case r >= 'G' && r <= 'Z':
			r = 'G' + (r-'G'+step(k, 20))%20
		case r >= '0' && r <= '9':
			r = '0' + (r-'0'+step(k, 10))%10
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

// step is how far the k-th rotation moves within a class of size n: never
// a whole turn, so that every character moves.
func step(k, n int) rune {
	return rune(1 + (max(k, 1)-1)%(n-1))
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
