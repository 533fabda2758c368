package capture

// Which names name a credential. One classifier serves JSON keys at any
// depth, the names of {name, value} pairs (env variables, headers),
// command-line flags and the key of a key=value setting in free text, so
// that DB_PASSWORD, dbPassword, --db-password and "db-password": are all
// judged alike.

import "strings"

// credentialWords are words that name a credential wherever they stand in
// a name (api_key is two words; see credentialPairs).
var credentialWords = map[string]bool{
	"password": true, "passwd": true, "passphrase": true, "secret": true, "secrets": true,
	"credential": true, "credentials": true, "cookie": true, "cookies": true,
	"authorization": true, "bearer": true, "token": true, "apikey": true, "privatekey": true,
	"accesskey": true, "secretkey": true, "jwt": true, "sig": true,
}

// credentialParts are credential words inside longer words, for names
// written without separators (PGPASSWORD, GITHUBTOKEN, xsrftoken).
var credentialParts = []string{"password", "passwd", "passphrase", "secret", "credential", "apikey",
	"privatekey", "accesskey", "authtoken", "bearer"}

// credentialPairs are two-word credentials, first word → second word.
var credentialPairs = map[string]map[string]bool{
	"key":       setOf("api", "access", "secret", "private", "auth", "session", "signing", "encryption", "master", "account", "shared", "client", "license", "subscription", "storage", "service", "admin", "deploy", "webhook", "ssh", "app", "x"),
	"signature": setOf("access", "amz", "goog", "request", "shared"),
}

// credentialTails are credential words only as a name's last word:
// basicAuth, GITHUB_PAT, DB_PWD, pin; "pwd" alone is a directory.
var credentialTails = setOf("auth", "pat", "pwd", "pin", "otp")

// describingTails end names that describe a credential rather than hold
// it: token_type, passwordFile, api_key_env, authMethodId, maxTokens.
var describingTails = setOf("type", "types", "count", "limit", "usage", "kind", "name", "names", "id", "ids",
	"url", "uri", "endpoint", "file", "path", "dir", "env", "var", "length", "len", "size", "expiry",
	"expires", "expiration", "ttl", "format", "hint", "prompt", "label", "description", "method",
	"methods", "scheme", "provider", "source", "field", "budget", "required", "enabled", "present",
	"set", "header", "location", "help", "policy", "mode", "command")

func setOf(words ...string) map[string]bool {
	m := make(map[string]bool, len(words))
	for _, w := range words {
		m[w] = true
	}
	return m
}

// credentialName reports whether name (a key, variable, header or flag
// name) names a credential.
func credentialName(name string) bool {
	if len(name) < 3 || len(name) > 128 {
		return false
	}
	words := nameWords(name)
	n := len(words)
	if n == 0 || describingTails[words[n-1]] {
		return false
	}
	if n > 1 || words[0] != "pwd" {
		if credentialTails[words[n-1]] {
			return true
		}
	}
	for i, w := range words {
		if credentialWords[w] || strings.HasSuffix(w, "token") && len(w) <= 16 {
			return true
		}
		if i > 0 && credentialPairs[w][words[i-1]] {
			return true
		}
		for _, p := range credentialParts {
			if len(w) > len(p) && strings.Contains(w, p) {
				return true
			}
		}
	}
	return false
}

// nameWords splits a name into lower-case words at separators and case
// changes: "X-Api-Key" → x api key, "APIKey" → api key, "dbPassword" →
// db password.
func nameWords(name string) []string {
	var words []string
	start := -1
	flush := func(end int) {
		if start >= 0 && end > start {
			words = append(words, strings.ToLower(name[start:end]))
		}
		start = -1
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		if !isAlnum(c) {
			flush(i)
			continue
		}
		if start < 0 {
			start = i
			continue
		}
		prev := name[i-1]
		switch {
		case isUpper(c) && isLower(prev): // dbPassword
			flush(i)
			start = i
		case isLower(c) && isUpper(prev) && i-1 > start: // APIKey: API|Key
			flush(i - 1)
			start = i - 1
		}
	}
	flush(len(name))
	return words
}

func isUpper(c byte) bool { return c >= 'A' && c <= 'Z' }
func isLower(c byte) bool { return c >= 'a' && c <= 'z' }
func isDigit(c byte) bool { return c >= '0' && c <= '9' }
func isAlnum(c byte) bool { return isUpper(c) || isLower(c) || isDigit(c) }
