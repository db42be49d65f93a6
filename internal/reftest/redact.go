package reftest

import (
	"slices"
	"strings"
	"unicode"
)

// Secret reports whether a key names a credential, by the rule FORMAT.md
// states, written without nous's code: the key is cut into words (a
// separator goes before every upper-case letter that follows a lower-case
// letter or a digit, or that starts a capitalised word after an upper-case
// run), plurals of the rule's words are folded, and the words are matched.
func Secret(k string) bool {
	var b strings.Builder
	r := []rune(k)
	for i, c := range r {
		if i > 0 && (unicode.IsDigit(c) != unicode.IsDigit(r[i-1]) || unicode.IsUpper(c) && (unicode.IsLower(r[i-1]) ||
			(unicode.IsUpper(r[i-1]) && i+1 < len(r) && unicode.IsLower(r[i+1])))) {
			b.WriteRune(' ')
		}
		b.WriteRune(c)
	}
	words := strings.FieldsFunc(strings.ToLower(b.String()), func(c rune) bool { return !unicode.IsLetter(c) && !unicode.IsDigit(c) })
	for i, w := range words {
		if slices.Contains([]string{"secrets", "passwords", "passphrases", "credentials", "cookies", "apikeys", "keys", "tokens", "counts", "limits", "budgets"}, w) {
			words[i] = strings.TrimSuffix(w, "s")
		}
	}
	at := func(i int) string {
		if i < 0 || i >= len(words) {
			return ""
		}
		return words[i]
	}
	counters := []string{"max", "min", "input", "output", "prompt", "completion", "total", "cached", "cache", "reasoning", "num", "used", "remaining", "count", "limit", "budget", "usage", "per"}
	for i, w := range words {
		switch {
		case slices.Contains([]string{"secret", "password", "passwd", "passphrase", "credential", "authorization", "bearer", "cookie", "apikey"}, w):
			return true
		case w == "key" && slices.Contains([]string{"api", "private", "access", "secret", "signing", "client", "ssh", "encryption", "master"}, at(i-1)):
			return true
		case w == "token" && !slices.Contains(counters, at(i-1)) && !slices.Contains(counters, at(i+1)):
			return true
		}
	}
	return false
}

// Redact returns a copy of m without its secret keys, at any depth, lists
// included; nil stays nil.
func Redact(m map[string]any) map[string]any {
	if m == nil {
		return nil
	}
	out := make(map[string]any, len(m))
	for k, v := range m {
		if !Secret(k) {
			out[k] = redactValue(v)
		}
	}
	return out
}

func redactValue(v any) any {
	switch v := v.(type) {
	case map[string]any:
		return Redact(v)
	case []any:
		out := make([]any, len(v))
		for i, e := range v {
			out[i] = redactValue(e)
		}
		return out
	}
	return v
}
