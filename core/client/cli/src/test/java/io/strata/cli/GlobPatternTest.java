package io.strata.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;

class GlobPatternTest {
  private static boolean matches(String glob, String name) {
    return GlobPattern.compile(glob, false).matches(name);
  }

  @Test
  void starAndQuestionMark_matchRunsAndSingleCharacters() {
    assertThat(matches("*.bin", "a.bin")).isTrue();
    assertThat(matches("*.bin", ".bin")).isTrue();
    assertThat(matches("*.bin", "a.bin.tmp")).isFalse();
    assertThat(matches("*.bin", "axbin")).isFalse(); // the dot is literal, not regex's any character
    assertThat(matches("part-??", "part-07")).isTrue();
    assertThat(matches("part-??", "part-7")).isFalse();
  }

  @Test
  void classes_matchMembersRangesAndNegations() {
    assertThat(matches("f[abc]", "fb")).isTrue();
    assertThat(matches("f[abc]", "fd")).isFalse();
    assertThat(matches("f[a-c]x", "fcx")).isTrue();
    assertThat(matches("f[^a-c]", "fa")).isFalse();
    assertThat(matches("f[!a-c]", "fz")).isTrue();
    assertThat(matches("f[]]", "f]")).isTrue();
    assertThat(matches("f[[]", "f[")).isTrue();
  }

  @Test
  void braces_areAlternativesAndNest() {
    assertThat(matches("{a,b}.txt", "a.txt")).isTrue();
    assertThat(matches("{a,b}.txt", "b.txt")).isTrue();
    assertThat(matches("{a,b}.txt", "c.txt")).isFalse();
    assertThat(matches("x{a,b{c,d}}", "xbd")).isTrue();
    assertThat(matches("x{a,b{c,d}}", "xb")).isFalse();
    assertThat(matches("a,b", "a,b")).isTrue(); // a comma outside braces is itself
    assertThat(matches("a}", "a}")).isTrue();
  }

  @Test
  void backslash_escapesAWildcard_andRegexCharactersAreLiteral() {
    assertThat(matches("a\\*", "a*")).isTrue();
    assertThat(matches("a\\*", "ab")).isFalse();
    assertThat(matches("a+b(1)$", "a+b(1)$")).isTrue();
    assertThat(matches("a|b", "a")).isFalse();
    assertThat(GlobPattern.hasWildcard("a\\*b")).isFalse();
    assertThat(GlobPattern.unescape("a\\*b")).isEqualTo("a*b");
    assertThat(GlobPattern.hasWildcard("/d/*.bin")).isTrue();
    assertThat(GlobPattern.hasWildcard("/d/plain-name.bin")).isFalse();
  }

  @Test
  void ignoreCase_matchesEitherCase() {
    assertThat(GlobPattern.compile("*.BIN", true).matches("x.bin")).isTrue();
    assertThat(GlobPattern.compile("*.BIN", false).matches("x.bin")).isFalse();
  }

  @Test
  void malformedPatterns_sayWhatIsWrong() {
    assertThatThrownBy(() -> GlobPattern.compile("a[bc", false))
        .hasMessage("Illegal file pattern 'a[bc': the character class [ is not closed by ] (at index 1)");
    assertThatThrownBy(() -> GlobPattern.compile("{a,b", false))
        .hasMessage("Illegal file pattern '{a,b': the group { is not closed by } (at index 0)");
    assertThatThrownBy(() -> GlobPattern.compile("a\\", false))
        .hasMessage("Illegal file pattern 'a\\': a \\ at the end escapes nothing (at index 1)");
    assertThatThrownBy(() -> GlobPattern.compile("[z-a]", false))
        .hasMessageStartingWith("Illegal file pattern '[z-a]': Illegal character range");
  }

  @Test
  void expandSlashBraces_spreadsGroupsHoldingASlash_only() {
    assertThat(GlobPattern.expandSlashBraces("/a/{b/c,d}/e")).containsExactly("/a/b/c/e", "/a/d/e");
    assertThat(GlobPattern.expandSlashBraces("/a/{b,c}/e")).containsExactly("/a/{b,c}/e");
    assertThat(GlobPattern.expandSlashBraces("/{x/{1,2},y}"))
        .containsExactly("/x/{1,2}", "/y");
  }
}
