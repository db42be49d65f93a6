// Package switchtest holds the tests of a conversation that moves between
// the provider adapters (provider/anthropic, provider/openai,
// provider/gemini) at any point: each provider's replies, read through its
// SDK and adapter, in one session that every adapter must then send or
// refuse for a reason the caller can fix. It has no code of its own.
package switchtest
