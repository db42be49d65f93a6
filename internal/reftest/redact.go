package reftest

import (
	"slices"
	"strings"
	"unicode"
)

// Secret reports whether a key names a credential, by the rule nous's
// IsSecretKey states, written without its code: the key is cut into words (a
// separator goes before every upper-case letter that follows a lower-case
// letter, and before one that starts a capitalised word after an upper-case
// run, and between letters and digits), and the words are matched.
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
	in := func(w string, list string) bool { return slices.Contains(strings.Fields(list), w) }
	const credentials = "refresh access auth api session id bearer oauth jwt csrf xsrf github gitlab slack personal service device user client"
	counted := false
	for _, w := range words {
		counted = counted || in(w, "max min input output prompt completion total cached cache reasoning num n used remaining count limit budget usage per new audio text image thinking prediction context generated page next continuation cursor pagination")
	}
	for i, w := range words {
		prev := ""
		if i > 0 {
			prev = words[i-1]
		}
		for _, f := range strings.Fields("secret password passwd passphrase credential authorization bearer cookie apikey privatekey accesskey secretkey") {
			if strings.Contains(w, f) && w != "secretary" && w != "secretariat" {
				return true
			}
		}
		switch {
		case w == "creds":
			return true
		case (w == "pass" || w == "pwd") && i > 0:
			return true
		case (w == "key" || w == "keys") && i > 0 && !in(prev, "primary foreign sort partition cache public idempotency dedup dedupe group lookup unique composite row hash index map object routing shard message translation i18n hot short range join natural surrogate cluster distribution storage s3 redis cursor pagination next dict"):
			return true
		case strings.HasSuffix(w, "token") && (in(prev, credentials) || in(strings.TrimSuffix(w, "token"), credentials) || !counted):
			return true
		case w == "tokens" && in(prev, credentials):
			return true
		case strings.HasSuffix(w, "tokens") && w != "tokens":
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
