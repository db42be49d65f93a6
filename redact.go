package nous

import (
	"strings"
	"unicode"
)

// redactedKeys are the fragments that mark a deps key as a secret: a key
// that contains one of them, in any case, is never written (the rule of the
// Elixir library Nous).
var redactedKeys = []string{
	"api_key", "apikey", "token", "secret", "password", "passwd",
	"authorization", "credential", "private_key", "access_key", "auth_token", "bearer",
}

// isSecretKey reports whether k contains, case-insensitively, a fragment of
// redactedKeys.
func isSecretKey(k string) bool {
	k = strings.ToLower(k) // no allocation when k has no upper-case letter
	for _, s := range redactedKeys {
		if strings.Contains(k, s) {
			return true
		}
	}
	return false
}

// isSecretName reports whether an event-data key names a secret. Event data
// records what happened, usage counts among it, so the rule goes by words
// rather than fragments: "Authorization", "x-api-key", "refreshToken" and
// "db_password" are secrets, "input_tokens" and "max_tokens" are not.
func isSecretName(k string) bool {
	// Every word the rule looks for contains one of these fragments; a key
	// without any, most keys, is decided without splitting it into words.
	lower := strings.ToLower(k) // no allocation when k has no upper-case letter
	if !strings.Contains(lower, "key") && !strings.Contains(lower, "token") &&
		!strings.Contains(lower, "secret") && !strings.Contains(lower, "passw") &&
		!strings.Contains(lower, "authorization") && !strings.Contains(lower, "credential") &&
		!strings.Contains(lower, "bearer") {
		return false
	}
	words := keyWords(k)
	for i, w := range words {
		switch w {
		case "apikey", "token", "secret", "secrets", "password", "passwords", "passwd",
			"authorization", "credential", "credentials", "bearer":
			return true
		case "api", "private", "access":
			if i+1 < len(words) && words[i+1] == "key" {
				return true
			}
		}
	}
	return false
}

// keyWords splits k into lower-case words at anything but a letter or a
// digit and at camel-case humps: "XApiKey" gives x, api, key.
func keyWords(k string) []string {
	var words []string
	r := []rune(k)
	start := -1
	for i, c := range r {
		alnum := unicode.IsLetter(c) || unicode.IsDigit(c)
		hump := i > 0 && unicode.IsUpper(c) && (unicode.IsLower(r[i-1]) || unicode.IsDigit(r[i-1]) ||
			(unicode.IsUpper(r[i-1]) && i+1 < len(r) && unicode.IsLower(r[i+1])))
		if start >= 0 && (!alnum || hump) {
			words = append(words, strings.ToLower(string(r[start:i])))
			start = -1
		}
		if alnum && start < 0 {
			start = i
		}
	}
	if start >= 0 {
		words = append(words, strings.ToLower(string(r[start:])))
	}
	return words
}
