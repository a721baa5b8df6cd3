/// Help text written as paragraphs in the source, for ArgumentParser to wrap at the terminal's
/// width: the lines of a paragraph are joined (a blank line separates paragraphs); a line indented
/// more than the text, or starting a list item (`- `, `* `), keeps its own line.
func paragraphs(_ text: String) -> String {
    var out: [String] = []
    for line in text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init) {
        let keepsItsLine =
            line.isEmpty || line.hasPrefix(" ") || line.hasPrefix("\t") || line.hasPrefix("- ") || line.hasPrefix("* ")
        if !keepsItsLine, let last = out.last, !last.isEmpty {
            out[out.count - 1] = last + " " + line
        } else {
            out.append(line)
        }
    }
    return out.joined(separator: "\n")
}
