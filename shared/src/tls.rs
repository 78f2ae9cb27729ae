//! The process's TLS crypto provider: rustls over ring, which also verifies OAuth access tokens
//! ([`crate::auth::jwt_crypto`]), so that every binary carries one crypto back end. Every
//! reqwest client of the gateway (Tool Service calls, HTTP manifests, key sets, the AWS SDK's
//! requests through [`crate::aws_http`]) is built after [`install_crypto_provider`].

/// Installs ring as the process-wide rustls provider; does nothing when one is installed.
pub fn install_crypto_provider() {
    if rustls::crypto::CryptoProvider::get_default().is_none() {
        // A concurrent install may win the race; either way a provider is then in place.
        let _ = rustls::crypto::ring::default_provider().install_default();
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_provider_is_in_place_after_installing_twice() {
        super::install_crypto_provider();
        super::install_crypto_provider();
        assert!(rustls::crypto::CryptoProvider::get_default().is_some());
        assert!(reqwest::Client::builder().build().is_ok());
    }
}
