// Storage locations. The SDK's API, Graph and the debug/log form each number them differently
// (SEMANTICS §2); the internal model uses the SDK API's bits and converts at the edges.

/// What a save location and an open location share: the SDK API's bit as the raw value (0 for
/// `other`), the name the SDK spells it with, and whether it belongs to an account.
public protocol StorageLocation: RawRepresentable<Int>, CaseIterable, Hashable, Sendable {
    /// The location no API names: an unknown service.
    static var other: Self { get }
    /// These locations belong to an account; the others take none [doc].
    var takesAccount: Bool { get }
    /// The name the SDK spells it with (the case's name). Spelled out in each type: `"\(self)"`
    /// reflects on the value at every call, and was 5% of a 100,000-cell prediction.
    var name: String { get }
}

extension StorageLocation {

    /// The location of that name, in any case (`onedriveforbusiness`).
    public init?(name: String) {
        guard let l = Self.allCases.first(where: { $0.name.lowercased() == name.lowercased() }) else { return nil }
        self = l
    }

    /// Whether a caller may name an account with the location: the account-bound ones, and
    /// `other`, which seed 000 §Unknown or unlisted locations gives an unknown service reached
    /// through some account, perhaps one sharing the managed account's user name. It never
    /// is the managed account, so it decides nothing and files nothing under it.
    public var acceptsAccount: Bool { takesAccount || self == .other }
}

/// A place org data may be saved to (`isSaveToAllowedForLocation`).
/// Raw values are the SDK API's bits [doc: the SDK headers].
public enum SaveLocation: Int, StorageLocation, Codable {
    case other = 0
    case oneDriveForBusiness = 1
    case sharePoint = 2
    case box = 4
    case dropbox = 8
    case googleDrive = 16
    case localDrive = 32
    case cameraRoll = 64
    case accountDocument = 128

    public var takesAccount: Bool { self == .oneDriveForBusiness || self == .sharePoint || self == .accountDocument }

    public var name: String {
        switch self {
        case .other: "other"
        case .oneDriveForBusiness: "oneDriveForBusiness"
        case .sharePoint: "sharePoint"
        case .box: "box"
        case .dropbox: "dropbox"
        case .googleDrive: "googleDrive"
        case .localDrive: "localDrive"
        case .cameraRoll: "cameraRoll"
        case .accountDocument: "accountDocument"
        }
    }
}

/// A place data may be opened from into the app (`isOpenFromAllowedForLocation`).
/// Raw values are the SDK API's bits [doc: the SDK headers].
public enum OpenLocation: Int, StorageLocation, Codable {
    case other = 0
    case oneDriveForBusiness = 1
    case sharePoint = 2
    case camera = 4
    case localStorage = 8
    case photos = 16
    case accountDocument = 32

    public var takesAccount: Bool { self == .oneDriveForBusiness || self == .sharePoint || self == .accountDocument }

    public var name: String {
        switch self {
        case .other: "other"
        case .oneDriveForBusiness: "oneDriveForBusiness"
        case .sharePoint: "sharePoint"
        case .camera: "camera"
        case .localStorage: "localStorage"
        case .photos: "photos"
        case .accountDocument: "accountDocument"
        }
    }
}

/// A set of locations of one kind, stored as the SDK API's bitmask.
public protocol StorageLocationSet: OptionSet, Sendable, Codable, Hashable where RawValue == Int {
    associatedtype Location: StorageLocation
}

extension StorageLocationSet {
    public init(_ locations: [Location]) { self.init(rawValue: locations.reduce(0) { $0 | $1.rawValue }) }
    public func contains(_ l: Location) -> Bool { l.rawValue != 0 && rawValue & l.rawValue != 0 }
    public var locations: [Location] { Location.allCases.filter { contains($0) } }
}

/// A set of save locations.
public struct SaveLocations: StorageLocationSet {
    public typealias Location = SaveLocation
    public let rawValue: Int
    public init(rawValue: Int) { self.rawValue = rawValue }
}

/// A set of open-from (ingestion) locations.
public struct OpenLocations: StorageLocationSet {
    public typealias Location = OpenLocation
    public let rawValue: Int
    public init(rawValue: Int) { self.rawValue = rawValue }
}

/// Graph's `managedAppDataStorageLocation` names and what they mean to the SDK's save check.
public enum GraphStorageLocation: String, Sendable, CaseIterable {
    case oneDriveForBusiness, sharePoint, box, localStorage, photoLibrary

    public var saveLocation: SaveLocation {
        switch self {
        case .oneDriveForBusiness: return .oneDriveForBusiness
        case .sharePoint: return .sharePoint
        case .box: return .box
        case .localStorage: return .localDrive
        case .photoLibrary: return .cameraRoll
        }
    }

    public init?(_ save: SaveLocation) {
        guard let g = Self.allCases.first(where: { $0.saveLocation == save }) else { return nil }
        self = g
    }
}

/// Graph's `managedAppDataIngestionLocation` names and what they mean to the SDK's open check.
public enum GraphIngestionLocation: String, Sendable, CaseIterable {
    case oneDriveForBusiness, sharePoint, camera, photoLibrary

    public var openLocation: OpenLocation {
        switch self {
        case .oneDriveForBusiness: return .oneDriveForBusiness
        case .sharePoint: return .sharePoint
        case .camera: return .camera
        case .photoLibrary: return .photos
        }
    }

    public init?(_ open: OpenLocation) {
        guard let g = Self.allCases.first(where: { $0.openLocation == open }) else { return nil }
        self = g
    }
}
