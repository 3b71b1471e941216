import HDF5
import XCTest

/// Groups, paths, children, kinds and links, from Fixtures/hdf5/types.h5.
final class HDF5GroupTests: XCTestCase {
    private var file: HDF5File!

    override func setUpWithError() throws {
        file = try HDF5File(path: HDF5TestPaths.fixture("types.h5"))
    }

    override func tearDown() {
        file = nil
    }

    func testRootChildrenInNameOrder() throws {
        XCTAssertEqual(try file.root.childNames(),
                       ["data", "links", "nested", "order", "tracked"])
    }

    func testNameOrderIsByteWise() throws {
        XCTAssertEqual(try file.group(at: "order").childNames(),
                       ["Mid", "alpha", "beta10", "beta2", "data", "zeta"])
    }

    func testCreationOrderWhereTracked() throws {
        let tracked = try file.group(at: "tracked")
        XCTAssertEqual(try tracked.childNames(order: .creation),
                       ["zeta", "alpha", "Mid", "beta10", "beta2"])
        XCTAssertEqual(try tracked.childNames(), ["Mid", "alpha", "beta10", "beta2", "zeta"])
        // Not tracked: falls back to name order.
        XCTAssertEqual(try file.group(at: "order").childNames(order: .creation),
                       ["Mid", "alpha", "beta10", "beta2", "data", "zeta"])
    }

    func testChildrenWithKinds() throws {
        let children = try file.group(at: "order").children()
        XCTAssertEqual(children.first, HDF5Child(name: "Mid", kind: .group))
        XCTAssertEqual(children.first { $0.name == "data" }?.kind, .dataset)
        XCTAssertEqual(try file.group(at: "links").children(),
                       [HDF5Child(name: "dangling", kind: .other),
                        HDF5Child(name: "soft", kind: .dataset)])
    }

    func testNestedPathsRelativeAndAbsolute() throws {
        let level1 = try file.group(at: "nested/level1")
        XCTAssertEqual(level1.path, "/nested/level1")
        XCTAssertEqual(level1.name, "level1")
        let level2 = try level1.group(at: "level2")
        XCTAssertEqual(level2.path, "/nested/level1/level2")
        XCTAssertEqual(try level2.childNames(), ["leaf"])
        XCTAssertEqual(try level2.dataset(at: "leaf").readInt64s(), [1, 2, 3])
        XCTAssertEqual(try level2.dataset(at: "/data/i8").path, "/data/i8")  // absolute
        XCTAssertEqual(try file.group(at: "//nested/./level1/").path, "/nested/level1")
        XCTAssertEqual(try file.group(at: "/").path, "/")
    }

    func testExistsAndKind() throws {
        XCTAssertTrue(file.exists("nested"))
        XCTAssertTrue(file.exists("/nested/level1/level2/leaf"))
        XCTAssertTrue(file.exists("/"))
        XCTAssertFalse(file.exists("nested/missing"))
        XCTAssertFalse(file.exists("missing/deeper/still"))
        XCTAssertFalse(file.exists("data/f32/inside_a_dataset"))
        XCTAssertTrue(file.exists("links/soft"))
        XCTAssertFalse(file.exists("links/dangling"))
        XCTAssertEqual(try file.kind(at: "nested"), .group)
        XCTAssertEqual(try file.kind(at: "data/f16"), .dataset)
        XCTAssertEqual(try file.kind(at: "links/soft"), .dataset)
        XCTAssertNil(try file.kind(at: "links/dangling"))
        XCTAssertNil(try file.kind(at: "nope"))
        let nested = try file.group(at: "nested")
        XCTAssertTrue(nested.exists("level1/level2"))
        XCTAssertFalse(nested.exists("level2"))
    }

    func testSoftLinkOpensTarget() throws {
        let linked = try file.dataset(at: "links/soft")
        XCTAssertEqual(linked.shape, [2, 3, 4])
        XCTAssertEqual(try linked.readFloats(), try file.dataset(at: "data/f32").readFloats())
    }

    func testMissingObjectErrorListsNearestGroup() throws {
        let error = assertHDF5Error(.objectNotFound) { try file.group(at: "order/nope/deeper") }
        XCTAssertEqual(error?.objectPath, "/order/nope/deeper")
        XCTAssertEqual(error?.file, HDF5TestPaths.fixture("types.h5"))
        XCTAssertTrue(error?.hint?.contains("'/order'") ?? false, String(describing: error))
        XCTAssertTrue(error?.hint?.contains("beta10") ?? false, String(describing: error))
        assertHDF5Error(.objectNotFound) { try file.dataset(at: "links/dangling") }
    }

    func testWrongKindErrors() throws {
        let error = assertHDF5Error(.wrongObjectKind) { try file.group(at: "data/f32") }
        XCTAssertEqual(error?.expected, "a group")
        XCTAssertEqual(error?.found, "a dataset")
        assertHDF5Error(.wrongObjectKind) { try file.dataset(at: "nested") }
    }

    func testDescriptionNamesPathAndFile() throws {
        let group = try file.group(at: "nested")
        XCTAssertTrue(group.description.contains("/nested"))
        XCTAssertTrue(group.description.contains("types.h5"))
    }
}

/// Object identity: equal for every path reaching one object (soft and hard links).
final class HDF5ObjectIdentityTests: XCTestCase {
    func testLinksReachTheSameObject() throws {
        let file = try HDF5File(path: HDF5TestPaths.fixture("types.h5"))
        XCTAssertNotNil(file.objectIdentity(at: "/data/f32"))
        XCTAssertEqual(file.objectIdentity(at: "/links/soft"), file.objectIdentity(at: "/data/f32"))
        XCTAssertNotEqual(file.objectIdentity(at: "/links"), file.objectIdentity(at: "/data/f32"))
        XCTAssertNil(file.objectIdentity(at: "/links/dangling"))
        XCTAssertNil(file.objectIdentity(at: "/nowhere"))
        for name in ["model_weights_soft_links_to_itself.h5", "model_weights_hard_links_to_itself.h5"] {
            let looped = try HDF5File(path: HDF5TestPaths.repositoryRoot.appendingPathComponent("Fixtures/crashes/keras/" + name).path)
            let dense = try XCTUnwrap(looped.objectIdentity(at: "/model_weights/dense"))
            XCTAssertEqual(looped.objectIdentity(at: "/model_weights/dense/loop_a"), dense, name)
            XCTAssertEqual(looped.objectIdentity(at: "/model_weights/dense/loop_b/loop_c"), dense, name)
            XCTAssertNotEqual(looped.objectIdentity(at: "/model_weights"), dense, name)
        }
    }
}
