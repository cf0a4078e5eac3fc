// Contoso Docs: the document app. It declares the document types it opens, each with its MAM
// twin (Info.plist), so managed apps can send it files (Open-in); it keeps each file with its
// owner, encrypted when the owner is managed, and saves to and opens from storage locations.
//
//   mamlaunch run docs --user adele@contoso.com     a prompt you type into
//   Docs --script                                   what tests and experiments drive
//
// The stories: Library.swift (files with owners, protected), Locations.swift (save to, open
// from), Sharing.swift (Open-in out, documents in).
import Foundation
import MAMSampleSupport

exit(await SampleSession.main(app: "Docs") { await Docs.interactive() })
