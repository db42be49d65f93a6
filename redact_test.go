package nous_test

import (
	"log/slog"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nous-go/nous"
	"github.com/nous-go/nous/internal/reftest"
)

// secretKeys and settingKeys are the two halves of the redaction table:
// credentials the rule must drop, in every spelling a deps key or a request
// header takes, and settings whose names share a word with one.
var (
	secretKeys = []string{
		"api_key", "apikey", "api_keys", "apiKey", "APIKey", "XApiKey", "x-api-key", "x-api-keys", "api-key",
		"openai_api_key", "token", "access_token", "access_tokens", "refresh_tokens", "refreshToken",
		"AuthTokens", "AUTH_TOKEN", "auth_token", "id_token", "GITHUB_TOKEN", "secret", "client_secret",
		"client_secrets", "secret_key", "password", "db_password", "Passwd", "passphrase", "authorization",
		"Authorization", "credential", "credentials", "bearer", "private_key", "private-key", "privateKey",
		"access_key", "accessKeys", "access-key", "ssh_key", "Cookie", "set-cookie", "user.password",
		"secret2", "oauth2_token", "api_key_v2", "PGPASSWORD", "authtoken", "Authorizations", "secretkey",
		"X-RapidAPI-Key", "Ocp-Apim-Subscription-Key", "X-Auth-Key", "openai_key", "app_key", "hmac_key", "smtp_pass",
		"creds", "sessionToken", "X-Goog-Api-Key", "Proxy-Authorization", "api_token", "client_secret_id",
		// A credential whatever else the key says: words that elsewhere
		// count tokens or page through results do not make these settings.
		"FB_PAGE_ACCESS_TOKEN", "page_access_token", "pageAccessToken", "new_access_token", "new_refresh_token",
		"cached_access_token", "next_access_token", "text_auth_token", "max_age_access_token", "input_api_token",
		"pageauthtoken",
		// Provider SDKs' environment variables.
		"OPENAI_API_KEY", "ANTHROPIC_API_KEY", "GEMINI_API_KEY", "GOOGLE_API_KEY", "AZURE_OPENAI_API_KEY",
		"MISTRAL_API_KEY", "COHERE_API_KEY", "GROQ_API_KEY", "HF_TOKEN", "HUGGINGFACEHUB_API_TOKEN",
		"GITHUB_TOKEN", "SLACK_BOT_TOKEN", "DISCORD_TOKEN", "TELEGRAM_BOT_TOKEN", "NPM_TOKEN",
		// OAuth and OpenID Connect fields.
		"access_token", "refresh_token", "id_token", "client_secret", "accessToken", "refreshToken", "idToken",
		// Cloud SDK configuration.
		"AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "aws_secret_access_key", "AZURE_CLIENT_SECRET",
		"GOOGLE_APPLICATION_CREDENTIALS", "private_key_id", "DATABASE_PASSWORD", "REDIS_PASSWORD",
	}
	settingKeys = []string{
		"max_tokens", "max_output_tokens", "maxTokens", "input_tokens", "output_tokens", "total_tokens",
		"cache_read_input_tokens", "reasoning_tokens", "token_count", "tokenCount", "token_limit",
		"tokens_used", "tokenizer", "secretary", "turn", "monkey", "keyboard", "key", "keys", "primary_key",
		"public_key", "sort_key", "auth", "auth_method", "oauth_provider", "passage", "bypass", "compass",
		"model", "temperature", "user", "theme", "lang", "iteration", "request_id", "x-request-id",
		"content-type", "session", "credit", "tokyo", "gpt4_max_tokens", "x509", "tokens", "audio_tokens",
		"accepted_prediction_tokens", "max_new_tokens", "max_thinking_tokens", "n_tokens", "text_tokens",
		"next_page_token", "pageToken", "cache_key", "idempotency_key", "pass", "Content-Type",
		// Usage and pagination fields of provider and cloud APIs.
		"prompt_tokens", "completion_tokens", "max_completion_tokens", "cached_tokens", "cache_creation_input_tokens",
		"thoughts_token_count", "candidatesTokenCount", "promptTokenCount", "totalTokenCount", "nextPageToken",
		"page_token", "continuation_token", "ContinuationToken", "max_tokens_to_sample", "OPENAI_MAX_TOKENS",
		"OPENAI_BASE_URL", "AWS_REGION", "AZURE_OPENAI_ENDPOINT", "GOOGLE_CLOUD_PROJECT",
	}
)

func TestIsSecretKey(t *testing.T) {
	require.GreaterOrEqual(t, len(secretKeys), 20)
	require.GreaterOrEqual(t, len(settingKeys), 20)
	for _, k := range secretKeys {
		assert.True(t, nous.IsSecretKey(k), "%q is a credential", k)
	}
	for _, k := range settingKeys {
		assert.False(t, nous.IsSecretKey(k), "%q is a setting", k)
	}
}

// Deps and event data are redacted by the one rule, at any depth, with one
// warning naming the keys dropped and never their values; WithRedaction
// replaces the rule.
func TestRedactionOneRuleForDepsAndData(t *testing.T) {
	values := map[string]any{}
	for _, k := range append(secretKeys, settingKeys...) {
		values[k] = "value-of-" + k
	}
	for _, tt := range []struct {
		name   string
		opts   []nous.Option
		secret func(string) bool
	}{
		{"default rule", nil, nous.IsSecretKey},
		{"replaced rule", []nous.Option{nous.WithRedaction(func(k string) bool { return k == "theme" || nous.IsSecretKey(k) })},
			func(k string) bool { return k == "theme" || nous.IsSecretKey(k) }},
	} {
		t.Run(tt.name, func(t *testing.T) {
			rec := &nous.LogRecorder{}
			c := nous.NewContext(append(tt.opts, nous.WithLogger(slog.New(rec)),
				nous.WithDeps(map[string]any{"top": values, "nested": map[string]any{"list": []any{values}}}))...)
			require.NoError(t, c.LogEvent(nous.EventRequestHeader, values))
			data, err := c.Serialize()
			require.NoError(t, err)
			d, err := nous.Deserialize(data)
			require.NoError(t, err)

			// The secrets' values are masked where the others hold them:
			// "value-of-secret" in "value-of-secretary".
			var secrets []string
			for k, v := range values {
				if tt.secret(k) {
					secrets = append(secrets, v.(string))
				}
			}
			slices.SortFunc(secrets, func(a, b string) int { return len(b) - len(a) })
			var pairs []string
			for _, s := range secrets {
				pairs = append(pairs, s, nous.MaskedSecret)
			}
			mask := strings.NewReplacer(pairs...)
			want := map[string]any{}
			for k, v := range values {
				if !tt.secret(k) {
					want[k] = mask.Replace(v.(string))
				}
			}
			assert.Equal(t, want, d.Deps["top"])
			assert.Equal(t, []any{want}, d.Deps["nested"].(map[string]any)["list"])
			assert.Equal(t, want, d.Log().Events()[0].Data)
			assert.Empty(t, rec.Warnings(), "redacting is the rule, not a warning")
		})
	}
}

// The reference rule the model-based test redacts with, written apart from
// the package's, agrees with it on the whole table.
func TestIsSecretKeyAgreesWithTheReference(t *testing.T) {
	for _, k := range append(secretKeys, settingKeys...) {
		assert.Equal(t, reftest.Secret(k), nous.IsSecretKey(k), k)
	}
}
