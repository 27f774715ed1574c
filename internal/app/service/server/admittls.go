package server

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/pinseal/pinseal/internal/atomicfile"
)

// serveAdmission serves the handler over TLS on admission.listen; errors
// of the server go to served.
func (s *Server) serveAdmission(ctx context.Context, main *http.Server, served chan<- error) (*http.Server, error) {
	certs, err := newCertSource(s.cfg.Admission.TLS, time.Now)
	if err != nil {
		return nil, fmt.Errorf("admission tls: %w", err)
	}
	ln, err := net.Listen("tcp", s.cfg.Admission.Listen)
	if err != nil {
		return nil, fmt.Errorf("admission listen %s: %w", s.cfg.Admission.Listen, err)
	}
	srv := &http.Server{
		Handler:           s.admitRoutes(),
		ReadHeaderTimeout: main.ReadHeaderTimeout,
		ReadTimeout:       admitMaxTimeout + 5*time.Second,
		WriteTimeout:      admitMaxTimeout + 10*time.Second,
		IdleTimeout:       main.IdleTimeout,
		ErrorLog:          main.ErrorLog,
		BaseContext:       main.BaseContext,
		TLSConfig:         &tls.Config{MinVersion: tls.VersionTLS12, GetCertificate: certs.get},
	}
	s.admitAddr.Store(ln.Addr().String())
	go func() { served <- srv.ServeTLS(ln, "", "") }()
	s.log.Info("serving admission webhook", "addr", ln.Addr().String(), "mode", s.admitter.mode)
	return srv, nil
}

// certSource is the webhook's serving certificate: files read again when
// they change (cert-manager renews them in place), or a self-signed one
// made again before it ends.
type certSource struct {
	tls AdmissionTLS
	now func() time.Time

	mu      sync.Mutex
	cert    *tls.Certificate
	leaf    *x509.Certificate
	modTime time.Time // of certFile when it was read
}

func newCertSource(cfg AdmissionTLS, now func() time.Time) (*certSource, error) {
	c := &certSource{tls: cfg, now: now}
	if _, err := c.current(); err != nil {
		return nil, err
	}
	return c, nil
}

func (c *certSource) get(*tls.ClientHelloInfo) (*tls.Certificate, error) { return c.current() }

// current is the certificate to serve now.
func (c *certSource) current() (*tls.Certificate, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.tls.CertFile != "" {
		fi, err := os.Stat(c.tls.CertFile)
		if err != nil {
			if c.cert != nil {
				return c.cert, nil // mid-rotation: keep serving the last one
			}
			return nil, err
		}
		if c.cert == nil || !fi.ModTime().Equal(c.modTime) {
			cert, err := tls.LoadX509KeyPair(c.tls.CertFile, c.tls.KeyFile)
			if err != nil {
				if c.cert != nil {
					return c.cert, nil
				}
				return nil, fmt.Errorf("certFile %s, keyFile %s: %w", c.tls.CertFile, c.tls.KeyFile, err)
			}
			c.cert, c.modTime = &cert, fi.ModTime()
		}
		return c.cert, nil
	}
	ss := c.tls.SelfSigned
	if c.cert == nil {
		// A certificate from an earlier run is kept (the caBundle names it).
		if cert, err := tls.LoadX509KeyPair(filepath.Join(ss.Dir, "tls.crt"), filepath.Join(ss.Dir, "tls.key")); err == nil {
			if leaf, err := x509.ParseCertificate(cert.Certificate[0]); err == nil {
				c.cert, c.leaf = &cert, leaf
			}
		}
	}
	if c.cert == nil || c.now().After(c.leaf.NotAfter.Add(-ss.RenewBefore.D())) {
		cert, leaf, err := selfSign(ss, c.now())
		if err != nil {
			if c.cert != nil {
				return c.cert, nil
			}
			return nil, err
		}
		c.cert, c.leaf = cert, leaf
	}
	return c.cert, nil
}

// selfSign makes a self-signed serving certificate for ss.Hosts and
// writes it to ss.Dir (tls.crt is also the caBundle the webhook
// configuration needs).
func selfSign(ss *SelfSignedTLS, now time.Time) (*tls.Certificate, *x509.Certificate, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, nil, err
	}
	serial, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 126))
	if err != nil {
		return nil, nil, err
	}
	tmpl := &x509.Certificate{
		SerialNumber:          serial,
		Subject:               pkix.Name{CommonName: ss.Hosts[0], Organization: []string{"pinseal admission webhook"}},
		NotBefore:             now.Add(-5 * time.Minute),
		NotAfter:              now.Add(ss.Validity.D()),
		KeyUsage:              x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage:           []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		BasicConstraintsValid: true,
		IsCA:                  true, // its own CA: the caBundle is the certificate
	}
	for _, h := range ss.Hosts {
		if ip := net.ParseIP(h); ip != nil {
			tmpl.IPAddresses = append(tmpl.IPAddresses, ip)
		} else {
			tmpl.DNSNames = append(tmpl.DNSNames, h)
		}
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return nil, nil, err
	}
	kder, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return nil, nil, err
	}
	certPEM := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
	keyPEM := pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kder})
	if err := os.MkdirAll(ss.Dir, 0o700); err != nil {
		return nil, nil, err
	}
	// Key first: a reader that sees the new tls.crt finds its key.
	if err := atomicfile.WriteFile(filepath.Join(ss.Dir, "tls.key"), keyPEM, 0o600); err != nil {
		return nil, nil, err
	}
	if err := atomicfile.WriteFile(filepath.Join(ss.Dir, "tls.crt"), certPEM, 0o644); err != nil {
		return nil, nil, err
	}
	cert, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		return nil, nil, err
	}
	leaf, err := x509.ParseCertificate(der)
	return &cert, leaf, err
}
