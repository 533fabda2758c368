package capture

// Scanners for secrets that no single regular expression finds well: a
// credential's value after its name (DB_PASSWORD=…, "api_key": "…",
// --token …), the password in a URL, private key blocks, and an AWS
// secret key beside its key id. Each looks for a cheap anchor byte first
// and then reads around it, so a large text costs one pass per anchor.

import (
	"bytes"
	"strings"
)

// settingSpans finds values of credential settings: NAME=VALUE,
// NAME: VALUE, "NAME": "VALUE" (also JSON-escaped inside a JSON string),
// --NAME=VALUE and URL query parameters (?access_token=…).
func settingSpans(b []byte, json bool, add func(span)) {
	for i := 0; i < len(b); i++ {
		k := bytes.IndexAny(b[i:], "=:")
		if k < 0 {
			return
		}
		i += k
		if b[i] == '=' && i+1 < len(b) && b[i+1] == '=' { // a comparison
			i++
			continue
		}
		name, at := nameBefore(b, i, json)
		if name == "" || !credentialName(name) || bytes.HasSuffix(b[:at], []byte("//")) {
			continue // (user:password@ in a URL is urlPasswordSpans')
		}
		s, e := valueAfter(b, i+1, json)
		if e-s >= 4 && !bytes.HasPrefix(b[s:e], []byte("<redacted")) {
			add(span{start: s, end: e, kind: "credential setting"})
			i = e - 1
		}
	}
}

// nameBefore returns the name that ends just before b[i] (skipping
// blanks and a closing quote), or "", and where it starts.
func nameBefore(b []byte, i int, json bool) (string, int) {
	j := i
	for j > 0 && (b[j-1] == ' ' || b[j-1] == '\t') {
		j--
	}
	if j > 0 && (b[j-1] == '"' || b[j-1] == '\'') {
		j--
		for j > 0 && b[j-1] == '\\' {
			j--
		}
	}
	end := j
	for j > 0 && end-j < 128 && isNameByte(b[j-1]) {
		j--
	}
	if json && j < end && escapeLetter(b, j) {
		j++ // the n of a \n before the name
	}
	return string(b[j:end]), j
}

func isNameByte(c byte) bool { return isAlnum(c) || c == '_' || c == '-' || c == '.' }

// valueAfter returns the span of the value that starts at or after b[i]:
// a quoted string's inside, else a run up to a blank, quote, separator
// or escape. An auth scheme (Bearer, Basic, Token) is skipped.
func valueAfter(b []byte, i int, json bool) (int, int) {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t') {
		i++
	}
	if q, n := openQuote(b, i, json); n > 0 {
		s := i + n
		e := bytes.Index(b[s:], q)
		if e < 0 || e > 4096 {
			return s, s
		}
		return s, s + e
	}
	e := i
	for e < len(b) && !isValueEnd(b[e]) {
		e++
	}
	if e < len(b) && b[e] == ' ' && authScheme(b[i:e]) {
		return valueAfter(b, e, json)
	}
	return i, e
}

// openQuote returns the quote opening a value at b[i] and its length:
// ", ', or \" inside a JSON string.
func openQuote(b []byte, i int, json bool) ([]byte, int) {
	switch {
	case i >= len(b):
		return nil, 0
	case json && b[i] == '\\' && i+1 < len(b) && b[i+1] == '"':
		return []byte(`\"`), 2
	case b[i] == '"' || b[i] == '\'':
		return b[i : i+1], 1
	}
	return nil, 0
}

func isValueEnd(c byte) bool {
	switch c {
	case ' ', '\t', '\r', '\n', '"', '\'', '`', ',', ';', '&', '<', '>', '\\':
		return true
	}
	return false
}

func authScheme(w []byte) bool {
	for _, s := range []string{"bearer", "basic", "token", "digest"} {
		if strings.EqualFold(string(w), s) {
			return true
		}
	}
	return false
}

// flagSpans finds values given to credential flags in a command line
// written as text: --token VALUE, -password VALUE. (--token=VALUE is a
// setting.) Single-letter flags are left to argv arrays, where the tool
// is known.
func flagSpans(b []byte, add func(span)) {
	for i := 0; i < len(b); i++ {
		k := bytes.IndexByte(b[i:], '-')
		if k < 0 {
			return
		}
		i += k
		if i > 0 && !isFlagLead(b, i-1) {
			continue
		}
		n := i
		for n < len(b) && b[n] == '-' && n-i < 2 {
			n++
		}
		e := n
		for e < len(b) && (isAlnum(b[e]) || b[e] == '_' || b[e] == '-') {
			e++
		}
		if e-n < 3 || e >= len(b) || b[e] != ' ' || !credentialName(string(b[n:e])) {
			i = e - 1
			continue
		}
		s := e
		for s < len(b) && b[s] == ' ' {
			s++
		}
		v := s
		for v < len(b) && !isValueEnd(b[v]) {
			v++
		}
		if v-s >= 4 && b[s] != '-' {
			add(span{start: s, end: v, kind: "credential flag value"})
		}
		i = v - 1
	}
}

// isFlagLead reports whether b[i], the byte before a dash, lets a flag
// begin: a blank, a quote, or the letter of a JSON escape (\n, \t).
func isFlagLead(b []byte, i int) bool {
	switch b[i] {
	case ' ', '\t', '"', '\'', '\n':
		return true
	}
	return isLower(b[i]) && escapeLetter(b, i)
}

// urlPasswordSpans finds the password of URL userinfo: the PASS of
// scheme://user:PASS@host.
func urlPasswordSpans(b []byte, add func(span)) {
	for i := 0; ; {
		k := bytes.Index(b[i:], []byte("://"))
		if k < 0 {
			return
		}
		i += k + 3
		colon := -1
		for j := i; j < len(b); j++ {
			c := b[j]
			if c == ':' && colon < 0 {
				colon = j
			}
			if c == '@' {
				if colon >= 0 && j > colon+1 && !bytes.HasPrefix(b[colon+1:j], []byte("<redacted")) {
					add(span{start: colon + 1, end: j, kind: "url password"})
				}
				break
			}
			if strings.IndexByte("/?# \t\r\n\"'<>\\`", c) >= 0 {
				break
			}
		}
	}
}

var (
	pemBegin = []byte("-----BEGIN ")
	pemEnd   = []byte("-----END ")
	pemDash  = []byte("-----")
)

// keyBlockSpans finds the bodies of PEM private keys (RSA, EC, DSA,
// OPENSSH, ENCRYPTED, PGP … PRIVATE KEY [BLOCK]); the BEGIN and END lines
// stay to say what was there. A block with no END runs to the end of b.
func keyBlockSpans(b []byte, add func(span)) {
	for i := 0; ; {
		s, e, ok := nextKeyBlock(b, i)
		if !ok {
			return
		}
		add(span{start: s, end: e, kind: "private key"})
		i = e
	}
}

// nextKeyBlock returns the body of the first private key block at or
// after b[i].
func nextKeyBlock(b []byte, i int) (start, end int, ok bool) {
	for i < len(b) {
		k := bytes.Index(b[i:], pemBegin)
		if k < 0 {
			return 0, 0, false
		}
		h := i + k + len(pemBegin)
		d := bytes.Index(b[h:min(len(b), h+64)], pemDash)
		if d < 0 || !bytes.Contains(b[h:h+d], []byte("PRIVATE KEY")) {
			i = h
			continue
		}
		start = h + d + len(pemDash)
		if e := bytes.Index(b[start:], pemEnd); e >= 0 {
			return start, start + e, true
		}
		return start, len(b), true
	}
	return 0, 0, false
}

// keyBlockOpen reports whether b opens a private key block it does not
// close: the lines after it, up to the END line, are key material.
func keyBlockOpen(b []byte) bool {
	open := false
	for i := 0; ; {
		s, e, ok := nextKeyBlock(b, i)
		if !ok {
			return open
		}
		open = e == len(b) && !bytes.Contains(b[s:], pemEnd)
		i = max(e, s+1)
	}
}

// puttySpans finds the private lines of a PuTTY key file.
func puttySpans(b []byte, add func(span)) {
	k := bytes.Index(b, []byte("Private-Lines:"))
	if k < 0 {
		return
	}
	s := k + len("Private-Lines:")
	for s < len(b) && (b[s] == ' ' || isDigit(b[s])) {
		s++
	}
	e := len(b)
	if m := bytes.Index(b[s:], []byte("Private-MAC:")); m >= 0 {
		e = s + m
	}
	if e > s {
		add(span{start: s, end: e, kind: "private key"})
	}
}

// awsSecretSpans finds AWS secret access keys (40 base64 characters)
// within 300 bytes of an access key id already found.
func awsSecretSpans(b []byte, found []span, add func(span)) {
	for _, f := range found {
		if f.kind != "aws access key id" {
			continue
		}
		lo, hi := max(0, f.start-300), min(len(b), f.end+300)
		for i := lo; i < hi; {
			if !isB64(b[i]) {
				i++
				continue
			}
			j := i
			for j < len(b) && isB64(b[j]) {
				j++
			}
			s := i
			if escapeLetter(b, s) {
				s++
			}
			if j-s == 40 && (j == len(b) || b[j] != '=') && mixed(b[s:j]) {
				add(span{start: s, end: j, kind: "aws secret key"})
			}
			i = j
		}
	}
}

func isB64(c byte) bool { return isAlnum(c) || c == '/' || c == '+' }

// mixed: upper and lower case letters and a digit or symbol, as random
// key material has and words do not.
func mixed(w []byte) bool {
	var up, low, other bool
	for _, c := range w {
		switch {
		case isUpper(c):
			up = true
		case isLower(c):
			low = true
		default:
			other = true
		}
	}
	return up && low && other
}
