package clustertest

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"math/big"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// TLSServer is a redis-server started by a test that accepts only TLS
// connections, with a certificate for 127.0.0.1 signed by a CA of its own.
type TLSServer struct {
	Addr   string // host:port of the TLS listener
	CAFile string // PEM file of the CA that signed the server's certificate
	Pool   *x509.CertPool
}

// Redis is the server as a topology (Name "tls").
func (s *TLSServer) Redis() Redis {
	return Redis{Name: "tls", URL: "redis://" + s.Addr + "/0", CAFile: s.CAFile, Pool: s.Pool}
}

// StartTLS starts a TLS-only redis-server on a free loopback port (clients
// need no certificate) and kills it when the test ends.
func StartTLS(t testing.TB) *TLSServer {
	t.Helper()
	if _, err := exec.LookPath("redis-server"); err != nil {
		t.Skip("clustertest: redis-server is not installed (make redis installs it)")
	}
	dir := t.TempDir()
	s := &TLSServer{CAFile: filepath.Join(dir, "ca.pem")}
	cert, key := writeCerts(t, dir, s)
	for range 5 { // a port another process took between its pick and the bind is picked again
		s.Addr = freeAddr(t)
		_, port, _ := net.SplitHostPort(s.Addr)
		p, err := spawn(exec.Command("redis-server", "--port", "0", "--tls-port", port,
			"--tls-cert-file", cert, "--tls-key-file", key, "--tls-ca-cert-file", s.CAFile, "--tls-auth-clients", "no",
			"--bind", "127.0.0.1", "--save", "", "--appendonly", "no", "--dir", dir),
			redis.Options{Addr: s.Addr, TLSConfig: &tls.Config{RootCAs: s.Pool, MinVersion: tls.VersionTLS12}})
		if errors.Is(err, errPortTaken) {
			continue
		}
		if err != nil {
			t.Fatalf("clustertest: TLS: %v", err)
		}
		t.Cleanup(p.Kill)
		return s
	}
	t.Fatalf("clustertest: no free port for a TLS redis-server")
	return s
}

// writeCerts writes a CA (to s.CAFile, and s.Pool) and a server
// certificate for 127.0.0.1 it signed; it returns the server's files.
func writeCerts(t testing.TB, dir string, s *TLSServer) (cert, key string) {
	t.Helper()
	caKey, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	now := time.Now()
	caTmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "clustertest CA"},
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(24 * time.Hour), IsCA: true, BasicConstraintsValid: true,
		KeyUsage: x509.KeyUsageCertSign}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	ca, _ := x509.ParseCertificate(caDER)
	s.Pool = x509.NewCertPool()
	s.Pool.AddCert(ca)
	srvKey, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	srvTmpl := &x509.Certificate{SerialNumber: big.NewInt(2), Subject: pkix.Name{CommonName: "127.0.0.1"},
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(24 * time.Hour), IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)},
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}, KeyUsage: x509.KeyUsageDigitalSignature}
	srvDER, err := x509.CreateCertificate(rand.Reader, srvTmpl, ca, &srvKey.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	keyDER, _ := x509.MarshalECPrivateKey(srvKey)
	cert, key = filepath.Join(dir, "server.pem"), filepath.Join(dir, "server-key.pem")
	writePEM(t, s.CAFile, "CERTIFICATE", caDER)
	writePEM(t, cert, "CERTIFICATE", srvDER)
	writePEM(t, key, "EC PRIVATE KEY", keyDER)
	return cert, key
}

func writePEM(t testing.TB, path, kind string, der []byte) {
	t.Helper()
	if err := os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: kind, Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
}
