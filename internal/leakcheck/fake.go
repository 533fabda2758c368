package leakcheck

import (
	"encoding/base64"
	"fmt"
	"math/rand/v2"
	"strings"
)

// faker makes fake credentials of the right shape and length. Each holds
// "FAKE" and "EXAMPLE" where its alphabet allows, and a random core that
// makes it unique; the seed is fixed, so every run plants the same ones.
type faker struct {
	r *rand.Rand
}

func newFaker() *faker { return &faker{r: rand.New(rand.NewPCG(20260415, 7))} }

const (
	alnum      = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
	upperDigit = "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
	digits     = "0123456789"
	b64        = alnum + "+/"
)

func (f *faker) pick(alphabet string, n int) string {
	var b strings.Builder
	for range n {
		b.WriteByte(alphabet[f.r.IntN(len(alphabet))])
	}
	return b.String()
}

// shaped is a fake credential and its random core, the part that must
// not appear anywhere in an export even when the rest was redacted.
type shaped struct{ value, core string }

func (f *faker) shape(prefix, alphabet string, n int, suffix string) shaped {
	core := f.pick(alphabet, n)
	return shaped{prefix + "FAKE" + core + "EXAMPLE" + suffix, core}
}

func (f *faker) anthropic() shaped { return f.shape("sk-ant-api03-", alnum+"-_", 82, "AA") }
func (f *faker) openai() shaped    { return f.shape("sk-proj-", alnum+"-_", 60, "") }
func (f *faker) google() shaped    { return f.shape("AIzaSy", alnum+"-_", 22, "") } // AIza + 35
func (f *faker) github(prefix string) shaped {
	return f.shape(prefix, alnum, 25, "") // prefix + 36
}

func (f *faker) githubPAT() shaped {
	s := f.shape("github_pat_11", alnum, 9, "_"+f.pick(alnum, 59))
	return s
}

func (f *faker) gitlab() shaped { return f.shape("glpat-", alnum+"-_", 9, "") } // glpat- + 20
func (f *faker) slack(t string) shaped {
	return f.shape("xox"+t+"-"+f.pick(digits, 11)+"-"+f.pick(digits, 13)+"-", alnum, 13, "")
}
func (f *faker) stripe(prefix string) shaped   { return f.shape(prefix, alnum, 24, "") }
func (f *faker) awsKeyID(prefix string) shaped { return f.shape(prefix, upperDigit, 5, "") } // prefix + 16
func (f *faker) awsSecret() shaped {
	core := f.pick(b64, 28)
	return shaped{"FAKE/" + core + "EXAMPLE", core} // 40 base64 characters
}
func (f *faker) azureKey() shaped { return f.shape("", b64, 75, "==") } // 88 base64 characters
func (f *faker) sasSig() shaped   { return f.shape("", alnum, 30, "%3D") }
func (f *faker) npm() shaped      { return f.shape("npm_", alnum, 25, "") } // npm_ + 36
func (f *faker) hf() shaped       { return f.shape("hf_", alnum, 23, "") }  // hf_ + 34
func (f *faker) opaque() shaped   { return f.shape("", alnum, 24, "") }
func (f *faker) password() shaped { return f.shape("", alnum+"-_!", 12, "") }

// jwt is a signed token with a FAKE subject.
func (f *faker) jwt() shaped {
	core := f.pick(alnum, 24)
	payload := base64.RawURLEncoding.EncodeToString(fmt.Appendf(nil, `{"sub":"FAKE-%s-EXAMPLE","iat":1700000000}`, core))
	sig := "FAKE" + f.pick(alnum+"-_", 30) + "EXAMPLE"
	return shaped{"eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9." + payload + "." + sig, sig}
}

// basic is the credentials of an Authorization: Basic header.
func (f *faker) basic() shaped {
	v := base64.StdEncoding.EncodeToString([]byte("fakeuser:FAKE-" + f.pick(alnum, 16) + "-EXAMPLE"))
	return shaped{v, v}
}

// keyBlock is a PEM private key of kind ("RSA", "OPENSSH", "EC") with n
// body lines; its core is its first body line.
func (f *faker) keyBlock(kind string, n int) shaped {
	lines := make([]string, n)
	for i := range lines {
		lines[i] = "FAKEEXAMPLE" + f.pick(b64, 53)
	}
	return shaped{"-----BEGIN " + kind + " PRIVATE KEY-----\n" + strings.Join(lines, "\n") + "\n-----END " + kind + " PRIVATE KEY-----", lines[0]}
}
