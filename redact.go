package nous

import (
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/nous-go/nous/internal/jsonx"
)

// MaskedSecret is what a written context holds in place of a secret value
// of its deps wherever the value occurs: in a message, a tool call's
// arguments, event data, the state. The values of the keys the redaction
// rule names are secret, and so is everything nested under such a key.
// A value shorter than 8 bytes is not masked: no service issues so short a
// credential, and masking it would damage ordinary text (a word, a year)
// in the stored conversation, and show where the value occurs. See
// [Context.Serialize].
const MaskedSecret = jsonx.Masked

// IsSecretKey reports whether key names a credential. It is the rule
// [Context.Serialize] and [Context.AppendEventJSON] redact deps and event
// data with, at any depth, unless [Context.Redact] replaces it.
//
// The rule goes by the words of the key: it is split at anything but a
// letter or a digit, between letters and digits, and where the case changes
// ("XApiKey2" is x, api, key, 2), and lower-cased. A key is a secret when
//   - a word contains secret (but is not secretary or secretariat),
//     password, passwd, passphrase, credential, authorization, bearer,
//     cookie, apikey, privatekey, accesskey or secretkey, or is creds, or
//     is pass or pwd after another word ("PGPASSWORD", "smtp_pass");
//   - the word key or keys follows a word that does not name an ordinary
//     key (primary, sort, cache, public, ...): "x-api-key",
//     "Ocp-Apim-Subscription-Key" and "hmac_key" are secrets, "key",
//     "sort_key" and "idempotency_key" are not;
//   - a word is token, or ends with it ("authtoken"), after a word that
//     names a credential (access, refresh, auth, api, id, session, ...) or
//     made of one: whatever else the key says, "page_access_token",
//     "new_refresh_token" and "cached_access_token" are secrets;
//   - a word is token, or ends with it, and no word of the key counts
//     tokens or pages through results (max, count, limit, input, page,
//     ...): "id_token" and "sync_token" are secrets, "token_count" and
//     "next_page_token" are not;
//   - a word is tokens, or ends with it, after a word that names a
//     credential (refresh, access, auth, api, session, id, ...):
//     "refresh_tokens" and "AuthTokens" are secrets, "max_tokens",
//     "audio_tokens" and "tokens" are counts.
//
// A key with none of the letters of these words, most keys, is decided
// without allocating.
func IsSecretKey(key string) bool {
	if !containsAnyFold(key, "secret", "pass", "pwd", "cred", "auth", "bearer", "cookie", "key", "token") {
		return false
	}
	words := keyWords(key)
	has := func(set []string) bool {
		return slices.ContainsFunc(words, func(w string) bool { return slices.Contains(set, w) })
	}
	for i, w := range words {
		prev := ""
		if i > 0 {
			prev = words[i-1]
		}
		switch {
		case w != "secretary" && w != "secretariat" && containsAny(w, secretFragments):
			return true
		case w == "creds", (w == "pass" || w == "pwd") && prev != "":
			return true
		case (w == "key" || w == "keys") && prev != "" && !slices.Contains(ordinaryKeys, prev):
			return true
		case strings.HasSuffix(w, "token") && (credential(prev) || credential(strings.TrimSuffix(w, "token")) || !has(tokenCounters)):
			return true
		case strings.HasSuffix(w, "tokens") && (w != "tokens" || credential(prev)):
			return true
		}
	}
	return false
}

// secretFragments are the pieces of a word that make it a credential.
var secretFragments = []string{
	"secret", "password", "passwd", "passphrase", "credential", "authorization", "bearer", "cookie",
	"apikey", "privatekey", "accesskey", "secretkey",
}

// ordinaryKeys are the words before key that name an ordinary key, not a
// credential.
var ordinaryKeys = []string{
	"primary", "foreign", "sort", "partition", "cache", "public", "idempotency", "dedup", "dedupe",
	"group", "lookup", "unique", "composite", "row", "hash", "index", "map", "object", "routing",
	"shard", "message", "translation", "i18n", "hot", "short", "range", "join", "natural", "surrogate",
	"cluster", "distribution", "storage", "s3", "redis", "cursor", "pagination", "next", "dict",
}

// tokenCounters are the words that say a key counts tokens, or pages
// through results, rather than holds a token.
var tokenCounters = []string{
	"max", "min", "input", "output", "prompt", "completion", "total", "cached", "cache", "reasoning",
	"num", "n", "used", "remaining", "count", "limit", "budget", "usage", "per", "new", "audio",
	"text", "image", "thinking", "prediction", "context", "generated", "page", "next", "continuation",
	"cursor", "pagination",
}

// credentialWords are the words before token or tokens that make them
// credentials.
var credentialWords = []string{
	"refresh", "access", "auth", "api", "session", "id", "bearer", "oauth", "jwt", "csrf", "xsrf",
	"github", "gitlab", "slack", "personal", "service", "device", "user", "client",
}

// credential reports whether w, a word of a key, names a kind of
// credential.
func credential(w string) bool { return slices.Contains(credentialWords, w) }

// containsAny reports whether s contains one of subs.
func containsAny(s string, subs []string) bool {
	return slices.ContainsFunc(subs, func(sub string) bool { return strings.Contains(s, sub) })
}

// containsAnyFold reports whether s contains, in any ASCII letter case, one
// of subs, which are lower-case ASCII, without allocating.
func containsAnyFold(s string, subs ...string) bool {
	for i := range len(s) {
		for _, sub := range subs {
			if len(s)-i >= len(sub) && equalFoldASCII(s[i:i+len(sub)], sub) {
				return true
			}
		}
	}
	return false
}

// equalFoldASCII reports whether s equals lower, lower-case ASCII, up to the
// case of ASCII letters.
func equalFoldASCII(s, lower string) bool {
	for i := range len(lower) {
		c := s[i]
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		if c != lower[i] {
			return false
		}
	}
	return true
}

// keyWords splits k into lower-case words at anything but a letter or a
// digit, between letters and digits, and at camel-case humps: "XApiKeys2"
// gives x, api, keys, 2.
func keyWords(k string) []string {
	var words []string
	r := make([]rune, 0, utf8.RuneCountInString(k))
	for _, c := range k {
		r = append(r, c)
	}
	start := -1
	for i, c := range r {
		alnum := unicode.IsLetter(c) || unicode.IsDigit(c)
		hump := i > 0 && (unicode.IsDigit(c) != unicode.IsDigit(r[i-1]) ||
			unicode.IsUpper(c) && (unicode.IsLower(r[i-1]) || unicode.IsUpper(r[i-1]) && i+1 < len(r) && unicode.IsLower(r[i+1])))
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
