package reftest

import "strings"

// Secret reports whether a deps key names a secret that a saved context
// never holds: it contains, in any case, one of the fragments of the spec.
func Secret(k string) bool {
	k = strings.ToLower(k)
	for _, s := range []string{"api_key", "apikey", "token", "secret", "password", "passwd", "authorization", "credential", "private_key", "access_key", "auth_token", "bearer"} {
		if strings.Contains(k, s) {
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
