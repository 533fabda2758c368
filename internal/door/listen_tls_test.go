package door

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"io"
	"math/big"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// selfSigned writes a certificate and key for 127.0.0.1 and returns
// their paths and a pool that trusts the certificate.
func selfSigned(t *testing.T) (certFile, keyFile string, pool *x509.CertPool) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1),
		Subject:      pkix.Name{CommonName: "acpscope test"},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(time.Hour),
		IPAddresses:  []net.IP{net.ParseIP("127.0.0.1")},
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	keyDER, _ := x509.MarshalECPrivateKey(key)
	dir := t.TempDir()
	certFile, keyFile = filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600)
	os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER}), 0o600)
	cert, _ := x509.ParseCertificate(der)
	pool = x509.NewCertPool()
	pool.AddCert(cert)
	return certFile, keyFile, pool
}

// TestListenAndServeProtocols checks that the listener proxy and serve use
// speaks HTTP/2 over TLS (--tls-cert/--tls-key), cleartext HTTP/2 with
// prior knowledge, and HTTP/1.1, and stops when its context ends.
func TestListenAndServeProtocols(t *testing.T) {
	certFile, keyFile, pool := selfSigned(t)
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.Write([]byte(r.Proto)) })
	tests := []struct {
		name      string
		tls       bool
		protocols func(*http.Protocols)
		want      string
	}{
		{"tls h2", true, func(p *http.Protocols) { p.SetHTTP2(true) }, "HTTP/2.0"},
		{"tls h1", true, func(p *http.Protocols) { p.SetHTTP1(true) }, "HTTP/1.1"},
		{"h2c", false, func(p *http.Protocols) { p.SetUnencryptedHTTP2(true) }, "HTTP/2.0"},
		{"h1", false, func(p *http.Protocols) { p.SetHTTP1(true) }, "HTTP/1.1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			lo := ListenOptions{Addr: "127.0.0.1:0"}
			scheme := "http"
			if tt.tls {
				lo.TLSCert, lo.TLSKey, scheme = certFile, keyFile, "https"
			}
			ctx, cancel := context.WithCancel(context.Background())
			addrc := make(chan string, 1)
			done := make(chan error, 1)
			go func() { done <- ListenAndServe(ctx, lo, h, func(a string) { addrc <- a }) }()
			addr := <-addrc
			var p http.Protocols
			tt.protocols(&p)
			c := &http.Client{Transport: &http.Transport{Protocols: &p, TLSClientConfig: &tls.Config{RootCAs: pool}}}
			resp, err := c.Get(scheme + "://" + addr + "/")
			if err != nil {
				t.Fatal(err)
			}
			got, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if string(got) != tt.want {
				t.Errorf("served over %s, want %s", got, tt.want)
			}
			c.CloseIdleConnections()
			cancel()
			select {
			case err := <-done:
				if err != nil {
					t.Fatalf("ListenAndServe: %v", err)
				}
			case <-time.After(3 * time.Second):
				t.Fatal("ListenAndServe did not stop")
			}
		})
	}
}
