package org.elasticsearch.io.ansi;

import java.util.function.Supplier;

/**
 * Stands in for the distribution's lib/tools/ansi-console jar (not on Maven
 * Central), which the server loads at start: no ANSI console, plain output.
 */
public class AnsiConsoleLoader implements Supplier<Object> {
    @Override
    public Object get() {
        return null;
    }
}
