package nous

import (
	"strings"
	"unicode"
)

// IsSecretKey reports whether key names a credential. It is the rule
// [Context.Serialize] and [Context.AppendEventJSON] redact deps and event
// data with, at any depth, unless [Context.Redact] replaces it.
//
// The rule goes by the words of the key: it is split at anything but a
// letter or a digit, between letters and digits, and where the case changes
// ("XApiKey2" is x, api, key, 2),
// lower-cased, and a plural is folded ("tokens" is token). A key is a secret
// when one of its words is secret, password, passwd, passphrase, credential,
// authorization, bearer, cookie or apikey; when it has the word key after
// api, private, access, secret, signing, client, ssh, encryption or master ("x-api-key",
// "accessKeys"); or when it has the word token, unless the token is counted
// ("max_tokens", "input_tokens", "token_count" and "tokenizer" are kept;
// "token", "refresh_tokens" and "AuthToken" are not).
func IsSecretKey(key string) bool {
	// Every word the rule looks for contains one of these; a key without
	// any, most keys, is decided without splitting it into words, and
	// without allocating unless it has an upper-case letter.
	lower := strings.ToLower(key)
	if !strings.Contains(lower, "key") && !strings.Contains(lower, "token") &&
		!strings.Contains(lower, "secret") && !strings.Contains(lower, "pass") &&
		!strings.Contains(lower, "authorization") && !strings.Contains(lower, "credential") &&
		!strings.Contains(lower, "bearer") && !strings.Contains(lower, "cookie") {
		return false
	}
	words := keyWords(key)
	for i, w := range words {
		switch w {
		case "secret", "password", "passwd", "passphrase", "credential", "authorization", "bearer", "cookie", "apikey":
			return true
		case "key":
			if i > 0 && keyQualifiers[words[i-1]] {
				return true
			}
		case "token":
			counted := (i > 0 && tokenCounters[words[i-1]]) || (i+1 < len(words) && tokenCounters[words[i+1]])
			if !counted {
				return true
			}
		}
	}
	return false
}

// keyQualifiers are the words that make the word key after them a secret.
var keyQualifiers = map[string]bool{
	"api": true, "private": true, "access": true, "secret": true, "signing": true, "client": true,
	"ssh": true, "encryption": true, "master": true,
}

// tokenCounters are the words that, next to the word token, say that the
// key counts tokens rather than holds one.
var tokenCounters = map[string]bool{
	"max": true, "min": true, "input": true, "output": true, "prompt": true, "completion": true,
	"total": true, "cached": true, "cache": true, "reasoning": true, "num": true, "used": true,
	"remaining": true, "count": true, "limit": true, "budget": true, "usage": true, "per": true,
}

// plurals are the words whose plural keyWords folds.
var plurals = map[string]bool{
	"secret": true, "password": true, "passphrase": true, "credential": true, "cookie": true,
	"apikey": true, "key": true, "token": true, "count": true, "limit": true, "budget": true,
}

// keyWords splits k into lower-case words at anything but a letter or a
// digit and at camel-case humps, folding plurals: "XApiKeys" gives x, api,
// key.
func keyWords(k string) []string {
	var words []string
	r := []rune(k)
	start := -1
	add := func(end int) {
		w := strings.ToLower(string(r[start:end]))
		if stem, ok := strings.CutSuffix(w, "s"); ok && plurals[stem] {
			w = stem
		}
		words = append(words, w)
		start = -1
	}
	for i, c := range r {
		alnum := unicode.IsLetter(c) || unicode.IsDigit(c)
		hump := i > 0 && (unicode.IsDigit(c) != unicode.IsDigit(r[i-1]) ||
			unicode.IsUpper(c) && (unicode.IsLower(r[i-1]) || unicode.IsUpper(r[i-1]) && i+1 < len(r) && unicode.IsLower(r[i+1])))
		if start >= 0 && (!alnum || hump) {
			add(i)
		}
		if alnum && start < 0 {
			start = i
		}
	}
	if start >= 0 {
		add(len(r))
	}
	return words
}
