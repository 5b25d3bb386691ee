//! What the client sends to prove it knows the password, per
//! authentication plugin.
//!
//! - `mysql_native_password`: SHA1(pw) XOR SHA1(nonce + SHA1(SHA1(pw))).
//! - `caching_sha2_password` (MySQL 8's default): SHA256(pw) XOR
//!   SHA256(SHA256(SHA256(pw)) + nonce) on the fast path; when the server
//!   has no cached entry it asks for the password itself, sent in clear
//!   over TLS or a Unix socket, otherwise XORed with the nonce and
//!   encrypted with the server's RSA public key (RSA-OAEP, SHA-1).
//! - `client_ed25519` (MariaDB): an Ed25519 signature of the nonce, with
//!   the key expanded from SHA512(pw) as Ed25519 expands a seed.

use super::Error;
use sha1::Sha1;
use sha2::{Digest, Sha256, Sha512};

pub(crate) const NATIVE: &str = "mysql_native_password";
pub(crate) const CACHING_SHA2: &str = "caching_sha2_password";
pub(crate) const ED25519: &str = "client_ed25519";

/// The scramble the server sent, without the NUL byte that ends it.
pub(crate) fn nonce(data: &[u8]) -> &[u8] {
    match data.split_last() {
        Some((0, rest)) => rest,
        _ => data,
    }
}

fn xor(a: &[u8], b: &[u8]) -> Vec<u8> {
    a.iter().zip(b).map(|(x, y)| x ^ y).collect()
}

pub(crate) fn native_password(password: &[u8], nonce: &[u8]) -> Vec<u8> {
    if password.is_empty() {
        return Vec::new();
    }
    let stage1 = Sha1::digest(password);
    let stage2 = Sha1::digest(stage1);
    let mut h = Sha1::new();
    h.update(nonce);
    h.update(stage2);
    xor(&stage1, &h.finalize())
}

pub(crate) fn caching_sha2(password: &[u8], nonce: &[u8]) -> Vec<u8> {
    if password.is_empty() {
        return Vec::new();
    }
    let stage1 = Sha256::digest(password);
    let stage2 = Sha256::digest(stage1);
    let mut h = Sha256::new();
    h.update(stage2);
    h.update(nonce);
    xor(&stage1, &h.finalize())
}

pub(crate) fn ed25519(password: &[u8], nonce: &[u8]) -> Vec<u8> {
    use ed25519_dalek::VerifyingKey;
    use ed25519_dalek::hazmat::{ExpandedSecretKey, raw_sign};
    let expanded: [u8; 64] = Sha512::digest(password).into();
    let key = ExpandedSecretKey::from_bytes(&expanded);
    let public = VerifyingKey::from(&key);
    raw_sign::<Sha512>(&key, nonce, &public).to_bytes().to_vec()
}

/// The password (NUL-terminated), XORed with the nonce, encrypted with the
/// server's RSA public key (PEM, as `caching_sha2_password` sends it).
pub(crate) fn rsa_encrypted_password(
    password: &[u8],
    nonce: &[u8],
    pem: &[u8],
) -> Result<Vec<u8>, Error> {
    use rsa::pkcs1::DecodeRsaPublicKey;
    use rsa::pkcs8::DecodePublicKey;
    use rsa::{Oaep, RsaPublicKey};
    let pem = std::str::from_utf8(pem)
        .map_err(|_| Error::Auth("the server's RSA public key is not text".into()))?
        .trim_end_matches('\0')
        .trim();
    let key = RsaPublicKey::from_public_key_pem(pem)
        .or_else(|_| RsaPublicKey::from_pkcs1_pem(pem))
        .map_err(|e| Error::Auth(format!("cannot read the server's RSA public key: {e}")))?;
    let mut data = password.to_vec();
    data.push(0);
    if !nonce.is_empty() {
        for (i, b) in data.iter_mut().enumerate() {
            *b ^= nonce[i % nonce.len()];
        }
    }
    key.encrypt(&mut rsa::rand_core::OsRng, Oaep::new::<Sha1>(), &data)
        .map_err(|e| Error::Auth(format!("cannot encrypt the password for the server: {e}")))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hex(b: &[u8]) -> String {
        b.iter().map(|x| format!("{x:02x}")).collect()
    }

    fn unhex(s: &str) -> Vec<u8> {
        (0..s.len())
            .step_by(2)
            .map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap())
            .collect()
    }

    // Expected values computed independently (Python's hashlib) from the
    // formulas in the module comment.
    #[test]
    fn native_and_caching_sha2_scrambles() {
        let nonce: Vec<u8> = (1..=20).collect();
        assert_eq!(
            hex(&native_password(b"secret", &nonce)),
            "b32bb3a583e1340c0a1108d58b1be49781ad8c2f"
        );
        assert_eq!(
            hex(&caching_sha2(b"secret", &nonce)),
            "746ebe205d56a0707acb3e796e834e0dd7b1d61743b26bd5202c7a623230c7c9"
        );
        assert!(native_password(b"", &nonce).is_empty());
        assert!(caching_sha2(b"", &nonce).is_empty());
        let mut with_nul = nonce.clone();
        with_nul.push(0);
        assert_eq!(super::nonce(&with_nul), &nonce[..]);
    }

    // With a 32-byte password, MariaDB's expansion is standard Ed25519's
    // (the password is the seed): RFC 8032's test vectors apply.
    #[test]
    fn ed25519_matches_rfc8032() {
        let seed = unhex("9d61b19deffd5a60ba844af492ec2cc44449c5697b326919703bac031cae7f60");
        assert_eq!(
            hex(&ed25519(&seed, b"")),
            "e5564300c360ac729086e2cc806e828a84877f1eb8e5d974d873e065224901555fb8821590a33bacc61e39701cf9b46bd25bf5f0595bbe24655141438e7a100b"
        );
        let seed = unhex("4ccd089b28ff96da9db6c346ec114e0f5b8a319f35aba624da8cf6ed4fb8a6fb");
        assert_eq!(
            hex(&ed25519(&seed, &[0x72])),
            "92a009a9f0d4cab8720e820b5f642540a2b27b5416503f8fb3762223ebdb69da085ac1e43e15996e458f3613d0f11d8c387b2eaeb4302aeeb00d291612bb0c00"
        );
    }

    #[test]
    fn rsa_encrypted_password_decrypts_to_the_xored_password() {
        use rsa::pkcs8::{EncodePublicKey, LineEnding};
        use rsa::{Oaep, RsaPrivateKey};
        let private = RsaPrivateKey::new(&mut rsa::rand_core::OsRng, 1024).unwrap();
        let pem = private
            .to_public_key()
            .to_public_key_pem(LineEnding::LF)
            .unwrap();
        let nonce: Vec<u8> = (1..=20).collect();
        let sealed = rsa_encrypted_password(b"pw", &nonce, pem.as_bytes()).unwrap();
        let opened = private.decrypt(Oaep::new::<Sha1>(), &sealed).unwrap();
        assert_eq!(opened, [b'p' ^ 1, b'w' ^ 2, 3]);
        assert!(rsa_encrypted_password(b"pw", &nonce, b"not a key").is_err());
    }
}
