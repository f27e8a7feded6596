package access_test

import (
	"encoding/json"
	"os"
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

// TestFindSecret_Corpus measures the credential check on a labelled corpus
// (testdata/credentials.json): every secret must be refused and every near miss — text
// that talks about passwords and keys, ids, hashes, masks — let through. It logs
// precision and recall, which make reliability reports.
func TestFindSecret_Corpus(t *testing.T) {
	b, err := os.ReadFile("testdata/credentials.json")
	if err != nil {
		t.Fatal(err)
	}
	var corpus struct {
		Secrets    []string `json:"secrets"`
		NearMisses []string `json:"near_misses"`
	}
	if err := json.Unmarshal(b, &corpus); err != nil {
		t.Fatal(err)
	}
	if len(corpus.Secrets) < 60 || len(corpus.NearMisses) < 60 {
		t.Fatalf("%d secrets and %d near misses, want at least 60 of each", len(corpus.Secrets), len(corpus.NearMisses))
	}
	caught, refused := 0, 0
	for _, s := range corpus.Secrets {
		if access.FindSecret(s) != "" {
			caught++
		} else {
			t.Errorf("a secret let through: %.80q", s)
		}
	}
	for _, s := range corpus.NearMisses {
		if reason := access.FindSecret(s); reason != "" {
			refused++
			t.Errorf("a near miss refused as %s: %.80q", reason, s)
		}
	}
	t.Logf("credential corpus: %d secrets, %d near misses; precision %.3f, recall %.3f",
		len(corpus.Secrets), len(corpus.NearMisses),
		float64(caught)/float64(max(1, caught+refused)), float64(caught)/float64(len(corpus.Secrets)))
}
