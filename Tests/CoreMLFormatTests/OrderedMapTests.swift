// `CustomLayerParams.parameters` is generated as an ordered map (ORDERED_MAPS in
// Scripts/gen_swift_spec.py): entries keep the file's order and repeated keys, so a network
// re-encodes byte-identically even when its keys are not sorted.
@testable import CoreMLFormat
import Foundation
import XCTest

final class OrderedMapTests: XCTestCase {
    private func model(_ parameters: [Spec.CustomLayerParams.ParametersEntry]) -> Spec.Model {
        let custom = Spec.CustomLayerParams(className: "Ordered", parameters: parameters)
        return Spec.Model(specificationVersion: 2, type: .neuralNetwork(SampleSpecs.network([.custom(custom)])))
    }

    private func parameters(_ m: Spec.Model) -> [Spec.CustomLayerParams.ParametersEntry]? {
        guard case let .custom(p)? = m.neuralNetwork?.layers.first?.layer else { return nil }
        return p.parameters
    }

    func testUnsortedAndRepeatedKeysSurviveARoundTrip() throws {
        let entries: [Spec.CustomLayerParams.ParametersEntry] = [
            .init(key: "z", paramValue: .double(1)), .init(key: "a", paramValue: .int(2)),
            .init(key: "z", paramValue: .bool(true)), .init(key: "m", paramValue: .unset),
        ]
        let bytes = try model(entries).encode()
        let decoded = try Spec.Model.decode(bytes, fileName: "ordered-map")
        let back = try XCTUnwrap(parameters(decoded))
        XCTAssertEqual(back.map(\.key), ["z", "a", "z", "m"], "wire order, repeated key kept")
        XCTAssertEqual(back.map(\.paramValue), [.double(1), .int(2), .bool(true), .unset])
        XCTAssertNil(back[3].value, "an unset value stays absent (no empty value message is written)")
        XCTAssertEqual(try decoded.encode(), bytes, "byte-identical re-encoding")
        // The dictionary view merges as protobuf does: the last entry of a key wins.
        guard case let .custom(p)? = decoded.neuralNetwork?.layers.first?.layer else { return XCTFail("no custom layer") }
        XCTAssertEqual(p.parameterDictionary, ["z": .bool(true), "a": .int(2), "m": .unset])
    }

    func testSortedKeysEncodeDifferentlyFromUnsortedOnes() throws {
        // Guards the premise: the order is visible in the bytes, so a dictionary (key-order
        // encoding) could not reproduce a file whose keys are unsorted.
        let unsorted = try model([.init(key: "b", paramValue: .int(1)), .init(key: "a", paramValue: .int(2))]).encode()
        let sorted = try model([.init(key: "a", paramValue: .int(2)), .init(key: "b", paramValue: .int(1))]).encode()
        XCTAssertNotEqual(unsorted, sorted)
        XCTAssertEqual(try Spec.Model.decode(unsorted, fileName: "unsorted").encode(), unsorted)
    }
}
