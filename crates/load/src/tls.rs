//! TLS client configuration from `--tls*` options (rustls with the ring
//! provider, so no system OpenSSL is needed).
//!
//! The driver names each node by its IP address during the handshake, so a
//! verified connection needs the node certificate to carry that IP in its
//! subject alternative names; `--tls-insecure` skips verification for labs
//! whose certificates do not.

use crate::config::ConnArgs;
use crate::error::{LoadError, Result};
use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::crypto::{verify_tls12_signature, verify_tls13_signature, CryptoProvider};
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer, ServerName, UnixTime};
use rustls::{ClientConfig, DigitallySignedStruct, RootCertStore, SignatureScheme};
use std::path::Path;
use std::sync::Arc;

/// The client TLS configuration, or `None` when no `--tls*` option asks for TLS.
pub fn client_config(args: &ConnArgs) -> Result<Option<Arc<ClientConfig>>> {
    if !(args.tls || args.tls_ca.is_some() || args.tls_insecure) {
        return Ok(None);
    }
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let builder = ClientConfig::builder_with_provider(provider.clone())
        .with_safe_default_protocol_versions()
        .map_err(|e| LoadError::option("--tls", e.to_string()))?;
    let builder = if args.tls_insecure {
        builder
            .dangerous()
            .with_custom_certificate_verifier(Arc::new(NoVerification(provider)))
    } else {
        let ca = args.tls_ca.as_deref().ok_or_else(|| {
            LoadError::option(
                "--tls",
                "give --tls-ca FILE (PEM of the CA that signed the nodes' certificates) \
                 or --tls-insecure",
            )
        })?;
        let mut roots = RootCertStore::empty();
        for cert in certificates(ca, "--tls-ca")? {
            roots
                .add(cert)
                .map_err(|e| LoadError::option("--tls-ca", format!("{}: {e}", ca.display())))?;
        }
        builder.with_root_certificates(roots)
    };
    let config = match (&args.tls_cert, &args.tls_key) {
        (Some(cert), Some(key)) => {
            let chain = certificates(cert, "--tls-cert")?;
            let key = PrivateKeyDer::from_pem_file(key).map_err(|e| {
                LoadError::option(
                    "--tls-key",
                    format!("{}: no PEM private key ({e})", key.display()),
                )
            })?;
            builder
                .with_client_auth_cert(chain, key)
                .map_err(|e| LoadError::option("--tls-cert", e.to_string()))?
        }
        _ => builder.with_no_client_auth(),
    };
    Ok(Some(Arc::new(config)))
}

/// Every certificate in a PEM file; an error names the option when there is none.
fn certificates(path: &Path, option: &str) -> Result<Vec<CertificateDer<'static>>> {
    let certs = CertificateDer::pem_file_iter(path)
        .and_then(|it| it.collect::<std::result::Result<Vec<_>, _>>())
        .map_err(|e| LoadError::option(option, format!("{}: {e}", path.display())))?;
    if certs.is_empty() {
        return Err(LoadError::option(
            option,
            format!("{}: no PEM CERTIFICATE block", path.display()),
        ));
    }
    Ok(certs)
}

/// Accepts any server certificate but still checks the handshake signatures,
/// so the session is encrypted to whoever holds the presented key.
#[derive(Debug)]
struct NoVerification(Arc<CryptoProvider>);

impl ServerCertVerifier for NoVerification {
    fn verify_server_cert(
        &self,
        _end_entity: &CertificateDer<'_>,
        _intermediates: &[CertificateDer<'_>],
        _server_name: &ServerName<'_>,
        _ocsp: &[u8],
        _now: UnixTime,
    ) -> std::result::Result<ServerCertVerified, rustls::Error> {
        Ok(ServerCertVerified::assertion())
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> std::result::Result<HandshakeSignatureValid, rustls::Error> {
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
    ) -> std::result::Result<HandshakeSignatureValid, rustls::Error> {
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
