//! JWT signature verification through the gateway's ring back end (CONTRACT A5): the
//! per-request cost of an access token's signature in the OAuth mode, for RS256 (a 2048-bit
//! key, the usual identity provider's), ES256 and EdDSA.

#![expect(
    missing_docs,
    reason = "criterion_group! generates an undocumented function"
)]

use criterion::{Criterion, criterion_group, criterion_main};
use jsonwebtoken::crypto::verify;
use jsonwebtoken::{Algorithm, DecodingKey};
use ring::rand::SystemRandom;
use ring::signature::{self, EcdsaKeyPair, Ed25519KeyPair, KeyPair};

#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// The signed part of a token: header and claims, base64url (the same text is signed with every
/// algorithm; `verify` takes the algorithm apart from the header).
const MESSAGE: &[u8] = b"eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJhbGljZSJ9";

/// A 2048-bit RSA public key's modulus (`n`), base64url as a JWKS gives it; its exponent is
/// 65537 (`AQAB`). Made with `openssl genrsa 2048` (ring verifies RSA but does not make RSA keys).
const RSA_MODULUS: &str = "ouhmzN599ymKB5dAx_KhaIqtUTqdnIFfEMpsZj6iAs85TIhg8BI-ZR0cFwfWvOh7yoN8Ul6odw3kuksfcJ9hlYv-\
rkKjvc4-CbF-ZcP0z2fG4GqkdjxsOlTwpTQA0rsN9Ha_8b30boGuDqLJC7kNb37irY5id3GwJh59Zw4i2jiGZ4C_\
8mXT1yXKWx42QH2RJc39bQ0SRT42FHLcq4U_gGu3n8Pc8uF9paj0Z_ccEmyGXxICq01yRqtnIJeBim1Hey-Gghlv\
hjAWtNuXANXvGEGbHvnXmY3BmqQK82mc-LOToLd_qtEtKNl269IAzp_Ee8TRkwLbCri-G6evO1uB9Q";
/// The RS256 signature of [`MESSAGE`] by that key (`openssl dgst -sha256 -sign`), base64url.
const RS256_SIGNATURE: &str = "Y6WhA_LvUjuIWaWt-dd6M3FOlJJ5mA-alMnwN7pHbvGelaG-j79YXEpptGdz--pgJGdAjVxpaCLY9ItY3R-3dJwn\
0_vnKtJ3npAHSPyRt14nRPyzKa6jV7KqIlQitNJlXgb4zbziGjS-6Lb7ysy1HIKsw5NUfY9X1BabAuJWeS0QT_T1\
qIGatE-1wZpQOP3x42CH3h9PCjItn1vlCTzU7eOS1pBYMze01tRb7SMJzmgYVZ4sT3a9p5Eab3_S1fLl2CMcTV39\
qiRc-lvD8Z2Ck0x5g5O8ZA7GPWc37kW3m5bbmVKf9MCyIcqf4sQvpnBMa1BfYVinQAsmH5XUOLY-eQ";

fn b64(bytes: &[u8]) -> String {
    use base64::Engine as _;
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(bytes)
}

fn jwt_verify(c: &mut Criterion) {
    mcp_gateway::auth::jwt_crypto::install();
    let rng = SystemRandom::new();
    let es256 = &signature::ECDSA_P256_SHA256_FIXED_SIGNING;
    let pkcs8 = EcdsaKeyPair::generate_pkcs8(es256, &rng).expect("a P-256 key");
    let pair = EcdsaKeyPair::from_pkcs8(es256, pkcs8.as_ref(), &rng).expect("a P-256 key");
    let point = pair.public_key().as_ref();
    let half = (point.len() - 1) / 2;
    let p256 = DecodingKey::from_ec_components(&b64(&point[1..=half]), &b64(&point[1 + half..]))
        .expect("a P-256 key");
    let p256_signature = b64(pair.sign(&rng, MESSAGE).expect("signed").as_ref());
    let pkcs8 = Ed25519KeyPair::generate_pkcs8(&rng).expect("an Ed25519 key");
    let ed = Ed25519KeyPair::from_pkcs8(pkcs8.as_ref()).expect("an Ed25519 key");
    let ed_key = DecodingKey::from_ed_components(&b64(ed.public_key().as_ref())).expect("a key");
    let ed_signature = b64(ed.sign(MESSAGE).as_ref());
    let rsa = DecodingKey::from_rsa_components(RSA_MODULUS, "AQAB").expect("an RSA key");

    for (name, signature, key, algorithm) in [
        ("jwt_verify/rs256", RS256_SIGNATURE, &rsa, Algorithm::RS256),
        (
            "jwt_verify/es256",
            p256_signature.as_str(),
            &p256,
            Algorithm::ES256,
        ),
        (
            "jwt_verify/eddsa",
            ed_signature.as_str(),
            &ed_key,
            Algorithm::EdDSA,
        ),
    ] {
        // Each bench checks once that the signature verifies and a tampered message does not.
        assert!(
            verify(signature, MESSAGE, key, algorithm).expect("verified"),
            "{name}"
        );
        let mut tampered = MESSAGE.to_vec();
        tampered[MESSAGE.len() - 2] ^= 1;
        assert!(
            !verify(signature, &tampered, key, algorithm).expect("checked"),
            "{name}"
        );
        c.bench_function(name, |b| {
            b.iter(|| verify(signature, MESSAGE, key, algorithm).expect("verified"));
        });
    }
}

criterion_group!(benches, jwt_verify);
criterion_main!(benches);
