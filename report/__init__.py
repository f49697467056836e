"""The quality report (`ragpulse report`): the store's and the rules' figures for a period, as one HTML page
with plots, a release comparison and the weekly review's worst cases; and its schedule."""
