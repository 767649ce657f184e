package masking

import (
	"math"
	"math/rand/v2"
	"testing"
)

// The guide's claim for a secret number, over the magnitudes a secret
// given in Terraform takes (float64, up to 16 integer digits, fractions
// and negatives): a threshold strictly between zero and the secret, or
// between the secret and the next power of ten beyond it, lies between
// the secret and one of its stand-ins, whatever the seed draws.
func TestNumberThresholdsAreCrossedAtEveryMagnitude(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for range 3000 {
		exp := rng.IntN(23) - 6 // 1e-6 .. 1e16
		n := math.Round((1+rng.Float64()*9)*math.Pow10(exp)*1e6) / 1e6
		if exp >= 0 && rng.IntN(2) == 0 {
			n = math.Round(n)
		}
		if n == 0 || n >= 1e16 {
			continue
		}
		if rng.IntN(2) == 0 {
			n = -n
		}
		r := NewRounds(map[string]any{"data/n": n, "data/other": "x"})
		standins := make([]float64, 0, r.Count())
		for i := range r.Count() {
			s, ok := r.Standins(i).At("data/n", n).(float64)
			if !ok {
				t.Fatalf("round %d: the stand-in of %v is no number", i, n)
			}
			standins = append(standins, s)
		}
		next := math.Pow(10, math.Floor(math.Log10(math.Abs(n)))+1)
		for range 4 {
			// Between zero and the next power of ten on the secret's
			// side: between zero and the secret, or beyond it.
			th := math.Copysign(rng.Float64()*next, n)
			if th == n || th == 0 {
				continue
			}
			crossed := false
			for _, s := range standins {
				crossed = crossed || (s > th) != (n > th)
			}
			if !crossed {
				t.Fatalf("secret %v, threshold %v: every stand-in %v is on the secret's side", n, th, standins)
			}
		}
	}
}
