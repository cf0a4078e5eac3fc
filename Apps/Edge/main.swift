// Edge: the managed browser. It handles http and https, their -intunemam twins and the
// managed-browser schemes (microsoft-edge-http, microsoft-edge-https), so that a managed app
// whose policy requires the managed browser can hand it web links. See Browser.swift.
//
//   mamlaunch run edge --user adele@contoso.com     a prompt you type into
//   Edge --script                                   what tests and experiments drive
import Foundation
import MAMSampleSupport

exit(await SampleSession.main(app: "Edge") { await Browser.interactive() })
