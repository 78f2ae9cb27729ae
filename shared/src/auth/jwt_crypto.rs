//! JWT signature verification for jsonwebtoken over ring, the crypto library that rustls uses in
//! every binary ([`crate::tls`]), so that one back end serves TLS and access tokens.
//!
//! Verification only: RS256/384/512, PS256/384/512 (2048–8192-bit keys), ES256, ES384 and
//! EdDSA (Ed25519), the public-key algorithms `MCP_OAUTH_ALGORITHMS` may name. HMAC algorithms
//! and every signing operation are refused: the gateway verifies an issuer's tokens and never
//! issues any (CONTRACT A5; HMAC is already refused by the settings).

use jsonwebtoken::crypto::{CryptoProvider, JwtSigner, JwtVerifier, KeyUtils};
use jsonwebtoken::errors::{Error, ErrorKind};
use jsonwebtoken::signature::{self, Verifier};
use jsonwebtoken::{Algorithm, AlgorithmFamily, DecodingKey, DecodingKeyKind, EncodingKey};
use ring::signature as ring_sig;

/// One verifier: the algorithm, ring's verification parameters and the key.
struct RingVerifier {
    algorithm: Algorithm,
    check: Check,
    key: DecodingKey,
}

/// How the signature is checked for the key's family.
enum Check {
    Rsa(&'static ring_sig::RsaParameters),
    Other(&'static dyn ring_sig::VerificationAlgorithm),
}

impl Verifier<Vec<u8>> for RingVerifier {
    fn verify(&self, message: &[u8], sig: &Vec<u8>) -> Result<(), signature::Error> {
        let failed = |_| signature::Error::new();
        match (&self.check, self.key.kind()) {
            (Check::Rsa(params), DecodingKeyKind::RsaModulusExponent { n, e }) => {
                ring_sig::RsaPublicKeyComponents { n, e }
                    .verify(params, message, sig)
                    .map_err(failed)
            }
            (Check::Rsa(params), DecodingKeyKind::SecretOrDer(der)) => {
                ring_sig::UnparsedPublicKey::new(*params, der)
                    .verify(message, sig)
                    .map_err(failed)
            }
            (Check::Other(algorithm), DecodingKeyKind::SecretOrDer(bytes)) => {
                ring_sig::UnparsedPublicKey::new(*algorithm, bytes)
                    .verify(message, sig)
                    .map_err(failed)
            }
            (Check::Other(_), DecodingKeyKind::RsaModulusExponent { .. }) => {
                Err(signature::Error::new())
            }
        }
    }
}

impl JwtVerifier for RingVerifier {
    fn algorithm(&self) -> Algorithm {
        self.algorithm
    }
}

/// ring's parameters of an RSA algorithm (PKCS#1 v1.5 or PSS, 2048–8192-bit keys).
fn rsa_parameters(algorithm: Algorithm) -> Option<&'static ring_sig::RsaParameters> {
    Some(match algorithm {
        Algorithm::RS256 => &ring_sig::RSA_PKCS1_2048_8192_SHA256,
        Algorithm::RS384 => &ring_sig::RSA_PKCS1_2048_8192_SHA384,
        Algorithm::RS512 => &ring_sig::RSA_PKCS1_2048_8192_SHA512,
        Algorithm::PS256 => &ring_sig::RSA_PSS_2048_8192_SHA256,
        Algorithm::PS384 => &ring_sig::RSA_PSS_2048_8192_SHA384,
        Algorithm::PS512 => &ring_sig::RSA_PSS_2048_8192_SHA512,
        _ => return None,
    })
}

#[expect(
    clippy::trivially_copy_pass_by_ref,
    reason = "the signature of jsonwebtoken's CryptoProvider factories"
)]
fn new_verifier(algorithm: &Algorithm, key: &DecodingKey) -> Result<Box<dyn JwtVerifier>, Error> {
    let (family, check) = match (algorithm, rsa_parameters(*algorithm)) {
        (_, Some(params)) => (AlgorithmFamily::Rsa, Check::Rsa(params)),
        (Algorithm::ES256, _) => (
            AlgorithmFamily::Ec,
            Check::Other(&ring_sig::ECDSA_P256_SHA256_FIXED),
        ),
        (Algorithm::ES384, _) => (
            AlgorithmFamily::Ec,
            Check::Other(&ring_sig::ECDSA_P384_SHA384_FIXED),
        ),
        (Algorithm::EdDSA, _) => (AlgorithmFamily::Ed, Check::Other(&ring_sig::ED25519)),
        // HMAC, and any algorithm a later jsonwebtoken adds.
        _ => return Err(ErrorKind::InvalidAlgorithm.into()),
    };
    if key.family() != family {
        return Err(ErrorKind::InvalidKeyFormat.into());
    }
    Ok(Box::new(RingVerifier {
        algorithm: *algorithm,
        check,
        key: key.clone(),
    }))
}

#[expect(
    clippy::trivially_copy_pass_by_ref,
    reason = "the signature of jsonwebtoken's CryptoProvider factories"
)]
fn no_signer(_: &Algorithm, _: &EncodingKey) -> Result<Box<dyn JwtSigner>, Error> {
    Err(ErrorKind::InvalidAlgorithm.into())
}

/// The provider: ring verifiers, no signers, no key utilities (the gateway builds keys from a
/// JWKS's public components only; CONTRACT A5).
static PROVIDER: CryptoProvider = CryptoProvider {
    signer_factory: no_signer,
    verifier_factory: new_verifier,
    key_utils: KeyUtils::new_unimplemented(),
};

/// Installs the ring provider as jsonwebtoken's process default; does nothing when one is
/// installed.
pub fn install() {
    if CryptoProvider::try_get_default().is_none() {
        // A concurrent install may win the race; either way a provider is then in place.
        let _ = PROVIDER.install_default();
    }
}

#[cfg(test)]
mod tests {
    use jsonwebtoken::crypto::verify;
    use ring::rand::SystemRandom;
    use ring::signature::{EcdsaKeyPair, Ed25519KeyPair, KeyPair};

    use super::*;

    fn b64(bytes: &[u8]) -> String {
        use base64::Engine as _;
        base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(bytes)
    }

    const MESSAGE: &[u8] = b"eyJhbGciOiJFUzI1NiJ9.eyJzdWIiOiJhbGljZSJ9";

    fn ecdsa(alg: &'static ring_sig::EcdsaSigningAlgorithm) -> (DecodingKey, String) {
        let rng = SystemRandom::new();
        let pkcs8 = EcdsaKeyPair::generate_pkcs8(alg, &rng).unwrap();
        let pair = EcdsaKeyPair::from_pkcs8(alg, pkcs8.as_ref(), &rng).unwrap();
        let point = pair.public_key().as_ref();
        let half = (point.len() - 1) / 2;
        let key = DecodingKey::from_ec_components(&b64(&point[1..=half]), &b64(&point[1 + half..]))
            .unwrap();
        (key, b64(pair.sign(&rng, MESSAGE).unwrap().as_ref()))
    }

    #[test]
    fn a5_es256_es384_and_eddsa_signatures_verify_and_tampering_does_not() {
        install();
        let (p256, p256_sig) = ecdsa(&ring_sig::ECDSA_P256_SHA256_FIXED_SIGNING);
        let (p384, p384_sig) = ecdsa(&ring_sig::ECDSA_P384_SHA384_FIXED_SIGNING);
        let pkcs8 = Ed25519KeyPair::generate_pkcs8(&SystemRandom::new()).unwrap();
        let ed = Ed25519KeyPair::from_pkcs8(pkcs8.as_ref()).unwrap();
        let ed_key = DecodingKey::from_ed_components(&b64(ed.public_key().as_ref())).unwrap();
        let ed_sig = b64(ed.sign(MESSAGE).as_ref());

        for (key, sig, alg) in [
            (&p256, &p256_sig, Algorithm::ES256),
            (&p384, &p384_sig, Algorithm::ES384),
            (&ed_key, &ed_sig, Algorithm::EdDSA),
        ] {
            assert!(verify(sig, MESSAGE, key, alg).unwrap(), "{alg:?}");
            assert!(
                !verify(sig, b"tampered.message", key, alg).unwrap(),
                "{alg:?}"
            );
        }
        // Another key of the same curve does not verify the signature.
        let (other, _) = ecdsa(&ring_sig::ECDSA_P256_SHA256_FIXED_SIGNING);
        assert!(!verify(&p256_sig, MESSAGE, &other, Algorithm::ES256).unwrap());
    }

    #[test]
    fn a5_hmac_and_a_key_of_another_family_are_refused() {
        install();
        let secret = DecodingKey::from_secret(b"shared-secret").unwrap();
        let sig = b64(b"whatever");
        for alg in [Algorithm::HS256, Algorithm::HS384, Algorithm::HS512] {
            assert!(verify(&sig, MESSAGE, &secret, alg).is_err(), "{alg:?}");
        }
        let (p256, p256_sig) = ecdsa(&ring_sig::ECDSA_P256_SHA256_FIXED_SIGNING);
        assert!(verify(&p256_sig, MESSAGE, &p256, Algorithm::RS256).is_err());
        assert!(verify(&p256_sig, MESSAGE, &secret, Algorithm::ES256).is_err());
    }

    #[test]
    fn a5_the_gateway_never_signs() {
        install();
        let key = EncodingKey::from_secret(b"shared-secret").unwrap();
        let header = jsonwebtoken::Header::new(Algorithm::HS256);
        assert!(jsonwebtoken::encode(&header, &serde_json::json!({"sub": "x"}), &key).is_err());
    }
}
