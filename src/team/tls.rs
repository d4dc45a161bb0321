//! TLS to the team's database with rustls (pure Rust, ring). `prefer`/`require` encrypt
//! without checking the certificate, as libpq does; `verify-ca`/`verify-full` check it
//! against `sslrootcert` or the web PKI roots, and the host name.

use std::path::PathBuf;
use std::sync::Arc;

use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::crypto::{verify_tls12_signature, verify_tls13_signature, CryptoProvider};
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, ServerName, UnixTime};
use rustls::{ClientConfig, DigitallySignedStruct, RootCertStore, SignatureScheme};

/// How the server's certificate is checked.
#[derive(Debug, Clone)]
pub enum Verify {
    Encrypt,
    Full(Option<PathBuf>),
}

fn provider() -> Arc<CryptoProvider> {
    Arc::new(rustls::crypto::ring::default_provider())
}

/// The rustls client configuration for a URL's `sslmode`.
pub fn client_config(v: &Verify) -> Result<ClientConfig, String> {
    let p = provider();
    let builder = ClientConfig::builder_with_provider(p.clone())
        .with_safe_default_protocol_versions()
        .map_err(|e| format!("TLS set-up failed: {e}"))?;
    Ok(match v {
        Verify::Encrypt => builder
            .dangerous()
            .with_custom_certificate_verifier(Arc::new(Unchecked(p)))
            .with_no_client_auth(),
        Verify::Full(root) => {
            let mut roots = RootCertStore::empty();
            match root {
                Some(file) => {
                    let certs = CertificateDer::pem_file_iter(file)
                        .map_err(|e| format!("cannot read sslrootcert {}: {e}", file.display()))?;
                    for c in certs {
                        let c = c.map_err(|e| {
                            format!(
                                "sslrootcert {} holds a bad certificate: {e}",
                                file.display()
                            )
                        })?;
                        roots
                            .add(c)
                            .map_err(|e| format!("sslrootcert {}: {e}", file.display()))?;
                    }
                }
                None => roots.extend(webpki_roots::TLS_SERVER_ROOTS.iter().cloned()),
            }
            builder.with_root_certificates(roots).with_no_client_auth()
        }
    })
}

/// `sslmode=require`: the link is encrypted, the certificate is not checked.
#[derive(Debug)]
struct Unchecked(Arc<CryptoProvider>);

impl ServerCertVerifier for Unchecked {
    fn verify_server_cert(
        &self,
        _end_entity: &CertificateDer<'_>,
        _intermediates: &[CertificateDer<'_>],
        _server_name: &ServerName<'_>,
        _ocsp_response: &[u8],
        _now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        Ok(ServerCertVerified::assertion())
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        verify_tls12_signature(
            message,
            cert,
            dss,
            &self.0.signature_verification_algorithms,
        )
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        verify_tls13_signature(
            message,
            cert,
            dss,
            &self.0.signature_verification_algorithms,
        )
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.0.signature_verification_algorithms.supported_schemes()
    }
}
