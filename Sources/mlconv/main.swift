import Foundation
import MLConvCLI

exit(MLConv.main(Array(CommandLine.arguments.dropFirst())))
