package jsonx

import (
	"encoding/json"
	"flag"
	"math/rand"
	"slices"
	"strings"
	"testing"
)

var maskSeed = flag.Int64("jsonx.seed", 20250101, "the seed of the random masking tests")

// A masker replaces every secret, in each form JSON gives it, with one
// marker per stretch: repeated, overlapping, one inside another, escaped
// once and twice; it leaves what is shorter than MinSecret alone.
func TestMaskerString(t *testing.T) {
	for _, tc := range []struct {
		name    string
		secrets []string
		in      string
		want    string
	}{
		{"none", []string{"sk-live-0123456789"}, "nothing here", "nothing here"},
		{"once", []string{"sk-live-0123456789"}, "OPENAI_API_KEY=sk-live-0123456789\n", "OPENAI_API_KEY=[REDACTED]\n"},
		{"repeated", []string{"sk-live-0123456789"}, "sk-live-0123456789 and sk-live-0123456789sk-live-0123456789", "[REDACTED] and [REDACTED][REDACTED]"},
		{"the whole text", []string{"sk-live-0123456789"}, "sk-live-0123456789", "[REDACTED]"},
		{"overlapping", []string{"abcdefgh12", "gh12345678"}, "x abcdefgh12345678 y", "x [REDACTED] y"},
		{"one inside another", []string{"sk-live-0123456789", "live-0123"}, "k=sk-live-0123456789; live-0123!", "k=[REDACTED]; [REDACTED]!"},
		{"a prefix of another", []string{"sk-live-0123", "sk-live-0123456789"}, "sk-live-0123456789 sk-live-0123", "[REDACTED] [REDACTED]"},
		{"a number", []string{"4815162342"}, "pin 4815162342.", "pin [REDACTED]."},
		{"escaped once", []string{`pa"ss\word-123`}, `{"p":"pa\"ss\\word-123"}`, `{"p":"[REDACTED]"}`},
		{"escaped twice", []string{`pa"ss\word-123`}, `"{\"p\":\"pa\\\"ss\\\\word-123\"}"`, `"{\"p\":\"[REDACTED]\"}"`},
		{"escaped for HTML", []string{"a<b>&cdefgh"}, `{"p":"a\u003cb\u003e\u0026cdefgh"}`, `{"p":"[REDACTED]"}`},
		{"raw and escaped", []string{`pa"ss\word-123`}, `pa"ss\word-123 or pa\"ss\\word-123`, `[REDACTED] or [REDACTED]`},
		{"not UTF-8", []string{"secret-\xff-value"}, "x secret-\xff-value y", "x [REDACTED] y"},
		{"short: seven bytes", []string{"1234567"}, "1234567 1234567", "1234567 1234567"},
		{"eight bytes", []string{"12345678"}, "1234567 12345678", "1234567 [REDACTED]"},
		{"a short one beside a long one", []string{"abc", "sk-live-0123456789"}, "abc sk-live-0123456789", "abc [REDACTED]"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := NewMasker(tc.secrets)
			got, changed := m.String(tc.in)
			if got != tc.want || changed != (tc.in != tc.want) {
				t.Fatalf("String(%q) = %q, %v; want %q", tc.in, got, changed, tc.want)
			}
		})
	}
}

// No masker is made of secrets all shorter than MinSecret: nothing is
// masked, at no cost.
func TestNewMaskerOfShortSecrets(t *testing.T) {
	if m := NewMasker([]string{"", "a", "1234567"}); m != nil {
		t.Fatalf("a masker of short secrets: %v", m.texts)
	}
	var m *Masker
	if got, changed := m.String("anything"); got != "anything" || changed {
		t.Fatal("a nil masker masked")
	}
	if !m.Masks([]string{"short"}) || m.Masks([]string{"long enough"}) {
		t.Fatal("Masks of a nil masker")
	}
	a, b := NewMasker([]string{"sk-live-0123456789", "x", "sk-live-0123456789"}), NewMasker([]string{"sk-live-0123456789"})
	if !a.Same(b) || !a.Masks([]string{"sk-live-0123456789"}) || a.Same(nil) || a.Masks(nil) {
		t.Fatal("maskers of the same secrets differ")
	}
}

// maskReference masks s by the rule of Masker.String, written plainly:
// every occurrence of every secret at least MinSecret long (any of its
// forms) marks its bytes; each run of marked bytes that overlap becomes one
// marker.
func maskReference(secrets []string, s string) string {
	type span struct{ lo, hi int }
	var spans []span
	for _, sec := range secrets {
		if len(sec) < MinSecret {
			continue
		}
		for _, f := range forms(sec) {
			for i := 0; i+len(f) <= len(s); i++ {
				if s[i:i+len(f)] == f {
					spans = append(spans, span{i, i + len(f)})
				}
			}
		}
	}
	slices.SortFunc(spans, func(a, b span) int {
		if a.lo != b.lo {
			return a.lo - b.lo
		}
		return b.hi - a.hi
	})
	var b strings.Builder
	at, end := 0, -1
	lo := 0
	for _, sp := range spans {
		if end >= 0 && sp.lo < end {
			end = max(end, sp.hi)
			continue
		}
		if end >= 0 {
			b.WriteString(s[at:lo])
			b.WriteString(Masked)
			at = end
		}
		lo, end = sp.lo, sp.hi
	}
	if end >= 0 {
		b.WriteString(s[at:lo])
		b.WriteString(Masked)
		at = end
	}
	b.WriteString(s[at:])
	return b.String()
}

// On random text over a small alphabet, with random secrets from it (so
// that they repeat, overlap and nest), a masker masks as the reference
// does, and leaves no secret in what it returns.
func TestMaskerMatchesTheReference(t *testing.T) {
	rng := rand.New(rand.NewSource(*maskSeed))
	const alphabet = "ab\"\\<x"
	word := func(n int) string {
		b := make([]byte, n)
		for i := range b {
			b[i] = alphabet[rng.Intn(len(alphabet))]
		}
		return string(b)
	}
	for run := range 3000 {
		var secrets []string
		for range 1 + rng.Intn(4) {
			secrets = append(secrets, word(MinSecret-2+rng.Intn(6)))
		}
		var text strings.Builder
		for range rng.Intn(12) {
			if rng.Intn(2) == 0 {
				text.WriteString(secrets[rng.Intn(len(secrets))])
			} else {
				text.WriteString(word(rng.Intn(6)))
			}
		}
		in := text.String()
		got, _ := NewMasker(secrets).String(in)
		if want := maskReference(secrets, in); got != want {
			t.Fatalf("run %d: secrets %q, text %q:\nmasked    %q\nreference %q", run, secrets, in, got, want)
		}
		for _, s := range secrets {
			if len(s) >= MinSecret && strings.Contains(got, s) {
				t.Fatalf("run %d: secret %q left in %q (from %q)", run, s, got, in)
			}
		}
	}
}

// Text keeps a string that held JSON as JSON, whatever the masking of its
// text would have done to it, and masks its values then.
func TestTextKeepsJSON(t *testing.T) {
	for _, tc := range []struct {
		name, secret, in, want string
	}{
		{"masked in place", "sk-live-0123456789", `{"k":"sk-live-0123456789"}`, `{"k":"[REDACTED]"}`},
		{"a raw form across quotes, still JSON", `x","y":"abcdefgh`, `{"a":"x","y":"abcdefgh"}`, `{"a":"[REDACTED]"}`},
		{"a raw form across quotes, JSON no more", `abcdefgh","`, `{"a":"abcdefgh","b":1}`, `{"a":"abcdefgh","b":1}`},
		{"after a backslash", "n123456789", `{"t":"a\n123456789"}`, `{"t":"a\n123456789"}`},
		{"a key", "sk-live-0123456789", `{"sk-live-0123456789":1,"b":"sk-live-0123456789"}`, `{"[REDACTED]":1,"b":"[REDACTED]"}`},
		{"plain text stays text", "sk-live-0123456789", `say "sk-live-0123456789`, `say "[REDACTED]`},
		{"a number", "4815162342", `{"pin":4815162342,"s":"4815162342"}`, `{"pin":"[REDACTED]","s":"[REDACTED]"}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := Sanitizer{Mask: NewMasker([]string{tc.secret})}
			got, _ := s.Text(tc.in)
			if got != tc.want {
				t.Fatalf("Text(%q) = %q, want %q", tc.in, got, tc.want)
			}
			if json.Valid([]byte(tc.in)) && !json.Valid([]byte(got)) {
				t.Fatalf("JSON %q masked to %q, not JSON", tc.in, got)
			}
		})
	}
}

// Secrets are collected under the keys the rule names, at any depth and
// in every shape: strings, numbers, nested maps and lists, typed values by
// their JSON names, and values JSON cannot hold by their fields.
func TestCollectSecrets(t *testing.T) {
	type creds struct {
		User string `json:"user"`
		Pass string `json:"password"`
	}
	type handle struct {
		Token string
		F     func()
	}
	rule := func(k string) bool { return k == "password" || k == "api_key" || k == "Token" }
	cyclic := map[string]any{"api_key": "cyclic-secret-1"}
	cyclic["self"] = cyclic
	deps := map[string]any{
		"api_key": "sk-live-0123456789",
		"db":      map[string]any{"host": "db.local", "password": "hunter2-horse"},
		"list":    []any{map[string]any{"password": 4815162342}},
		"nested":  map[string]any{"api_key": map[string]any{"a": "under-a-secret", "b": []any{1.5, true, nil}}},
		"typed":   creds{User: "ada", Pass: "typed-password-1"},
		"handle":  handle{Token: "handle-token-123", F: func() {}},
		"cycle":   cyclic,
		"plain":   "not a secret at all",
	}
	got := CollectSecrets(nil, deps, rule)
	slices.Sort(got)
	want := []string{"1.5", "4815162342", "cyclic-secret-1", "handle-token-123", "hunter2-horse", "sk-live-0123456789", "typed-password-1", "under-a-secret"}
	if !slices.Equal(got, want) {
		t.Fatalf("secrets %q, want %q", got, want)
	}
}

// FuzzMaskText: Text never panics; what it returns holds the secret in
// no string (a secret that shares a bracket with the marker aside: the
// marker and the text after it could spell it) and, when it was given a
// JSON object or array, is JSON with the secret in none of its strings
// and keys.
func FuzzMaskText(f *testing.F) {
	f.Add("sk-live-0123456789", `OPENAI_API_KEY=sk-live-0123456789`)
	f.Add(`pa"ss\word-123`, `{"p":"pa\"ss\\word-123"}`)
	f.Add(`abcdefgh","`, `{"a":"abcdefgh","b":1}`)
	f.Add("n123456789", `{"t":"a\n123456789"}`)
	f.Add("4815162342", `[4815162342,"4815162342"]`)
	f.Fuzz(func(t *testing.T, secret, in string) {
		s := Sanitizer{Mask: NewMasker([]string{secret})}
		got, _ := s.Text(in)
		if len(secret) < MinSecret || strings.ContainsAny(secret, "[]") {
			return
		}
		if lead := strings.TrimLeft(in, " \t\r\n"); !json.Valid([]byte(in)) || lead[0] != '{' && lead[0] != '[' {
			if strings.Contains(got, secret) {
				t.Fatalf("Text(%q) = %q holds the secret %q", in, got, secret)
			}
			return
		}
		v, err := Decode([]byte(got))
		if err != nil {
			t.Fatalf("JSON %q masked to %q, not JSON: %v", in, got, err)
		}
		var walk func(v any)
		walk = func(v any) {
			switch x := v.(type) {
			case string:
				if strings.Contains(x, secret) {
					t.Fatalf("Text(%q) = %q holds the secret %q in %q", in, got, secret, x)
				}
			case map[string]any:
				for k, e := range x {
					walk(k)
					walk(e)
				}
			case []any:
				for _, e := range x {
					walk(e)
				}
			}
		}
		walk(v)
	})
}

// BenchmarkMaskString masks a transcript of plain English with three
// secrets of the forms a context holds (an API key, a password, a
// number), two of them in it; ns/KB is the cost per KB of text.
func BenchmarkMaskString(b *testing.B) {
	m := NewMasker([]string{"sk-proj-4f9a8b7c6d5e4f3a2b1c", `pa"ss\word-123`, "4815162342"})
	para := "The weather in Paris is sunny, 21 degrees; the session key is sk-proj-4f9a8b7c6d5e4f3a2b1c and it expires soon. " +
		"Searching for flights: results 1-20 of 143, sorted by price, starting at 89 euros with a stop in Zurich. "
	text := strings.Repeat(para, 4096/len(para)+1)
	b.SetBytes(int64(len(text)))
	b.ReportAllocs()
	for b.Loop() {
		m.String(text)
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/(float64(len(text))/1024), "ns/KB")
}
