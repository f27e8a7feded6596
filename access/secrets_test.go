package access_test

import (
	"testing"

	"github.com/memgate/memgate/access"
)

func TestFindSecret(t *testing.T) {
	refused := []string{
		"-----BEGIN RSA PRIVATE KEY-----\nMIIEow...",
		"-----BEGIN OPENSSH PRIVATE KEY-----",
		"my key is AKIAIOSFODNN7EXAMPLE ok",
		"use sk-proj-abcdefghijklmnopqrstuvwxyz123456",
		"token ghp_abcdefghijklmnopqrstuvwxyz0123456789AB",
		"slack xoxb-1234567890-abcdefghij",
		"AIzaSyA-abcdefghijklmnopqrstuvwxyz01234",
		"jwt eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U",
		"Authorization: Bearer abcdefghijklmnopqrstuvwxyz012345",
		"password=hunter22",
		"PASSWORD: 'correct-horse'",
		`{"api_key": "k-123456789"}`,
		"db at postgres://admin:s3cr3t@db.internal:5432/app",
	}
	for _, text := range refused {
		if access.FindSecret(text) == "" {
			t.Errorf("FindSecret(%q) found nothing", text)
		}
	}
	allowed := []string{
		"Alice works at Acme as an engineer.",
		"The user prefers concise answers; password managers are a good idea.",
		"Reset your password on the settings page.",
		"Use a bearer token in the Authorization header.",
		"sk-short",
		"https://example.com/path?x=1",
		"the secret to good coffee is fresh beans",
		"ask about the API key rotation policy",
	}
	for _, text := range allowed {
		if reason := access.FindSecret(text); reason != "" {
			t.Errorf("FindSecret(%q) = %q, want nothing", text, reason)
		}
	}
}
