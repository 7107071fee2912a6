#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import VaultKit

extension JSONWriter {
    /// The attributes of `item` (no secret) as members of the current object.
    package mutating func attributes(of item: VaultItem) {
        key("service"); string(item.service)
        key("account"); string(item.account)
        key("label"); string(item.label)
        key("generic")
        if let generic = item.generic {
            if let text = String(validating: generic, as: UTF8.self) {
                string(text)
            } else {
                string(nil)
                key("genericBase64"); string(generic.base64EncodedString())
            }
        } else {
            string(nil)
        }
        key("created"); string(Timestamp.iso8601(item.created))
        key("modified"); string(Timestamp.iso8601(item.modified))
    }
}
