import Foundation

// MARK: options_json values (bug fix: "threads": 1 was rejected)

/// An integer option value from `JSONSerialization`, or nil for anything else (a JSON boolean,
/// a fraction, a string).
///
/// On Linux, swift-corelibs-foundation returns every JSON number as `NSNumber`, and an
/// `NSNumber` holding 0 or 1 also answers `is Bool`, so `value is Bool` cannot tell `1` from
/// `true`. JSON `true` / `false` come back as a boolean `NSNumber` whose `objCType` is "c"
/// (C `char`, Objective-C's BOOL encoding); numbers have "i", "q" or "d".
func jsonInteger(_ value: Any) -> Int? {
    guard let number = value as? NSNumber else { return nil }
    if String(cString: number.objCType) == "c" { return nil }
    return value as? Int
}
