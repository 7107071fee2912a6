/// An open session: the client that opened it (its unique bus name) and how its secrets
/// are encoded. Only that client may use it; it ends with Close or when the client leaves
/// the bus.
struct SecretSession {
    let owner: String
    let cipher: SessionCipher
}
