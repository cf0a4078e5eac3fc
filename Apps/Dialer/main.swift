// Dialer: handles tel: and telprompt: (and their -intunemam twins), so that managed apps can
// hand it phone numbers. See Dialer.swift.
//
//   mamlaunch run dialer                            a prompt you type into
//   Dialer --script                                 what tests and experiments drive
import Foundation
import MAMSampleSupport

exit(await SampleSession.main(app: "Dialer") { await Dialer.interactive() })
